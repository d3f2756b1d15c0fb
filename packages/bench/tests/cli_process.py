"""`python -m bench` as a test drives it by hand: a process it can signal, its output read
up to a marker, its children and their end, and result files read as strict JSON."""

import functools
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

FAST = ["framework=fake", "preset=smoke"]

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="/proc and the parent-death signal are Linux's"
)


def strict_json(path):
    """A result file as strict JSON: a bare NaN or Infinity is an error."""

    def refuse(name):
        raise ValueError(f"{path}: {name} is not JSON")

    return json.loads(Path(path).read_text(), parse_constant=refuse)


def start(args, env, cwd):
    """`python -m bench` in a subprocess that a test can Ctrl-C: a shell's background job (CI)
    starts with SIGINT ignored, and Python keeps that unless it is restored."""
    return subprocess.Popen(
        [sys.executable, "-m", "bench", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def read_until(proc, marker, lines, limit_s=120):
    """Read proc's output into lines until a line holds marker (or the output ends)."""
    timer = threading.Timer(limit_s, proc.kill)
    timer.start()
    try:
        for line in proc.stdout:
            lines.append(line)
            if marker in line:
                return True
        return False
    finally:
        timer.cancel()


def children(pid):
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def gone(pid, within_s=10.0):
    """True once pid has exited (a zombie counts: it runs no more) within within_s."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.1)
    return False


SIGKILL_BIT = 1 << (signal.SIGKILL - 1)  # in /proc/<pid>/status's signal masks


class Exit:
    """What watch_exit saw of a process: whether and when it went, and its last state."""

    def __init__(self):
        self.gone, self.seconds, self.sigkill_pending, self.last = False, None, False, {}

    def text(self):
        went = f"gone after {self.seconds:.2f} s" if self.gone else "still there"
        return (
            f"{went}; SIGKILL {'pending' if self.sigkill_pending else 'never pending'}; last "
            f"seen: {', '.join(f'{k} {v}' for k, v in self.last.items()) or 'never'}"
        )


def watch_exit(pid, within_s):
    """Poll /proc/<pid> until the process has exited (a zombie counts) or within_s passed:
    an Exit saying when it went, whether SIGKILL was ever pending for it, and its last state
    (State, PPid, the pending-signal masks)."""
    seen, start = Exit(), time.monotonic()
    while time.monotonic() - start < within_s:
        try:
            status = dict(
                line.split(":", 1)
                for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                if ":" in line
            )
        except (FileNotFoundError, ProcessLookupError):
            status = None
        if status is None or status.get("State", "").split()[:1] in (["Z"], ["X"]):
            seen.gone, seen.seconds = True, time.monotonic() - start
            return seen
        seen.last = {k: status[k].strip() for k in ("State", "PPid", "SigPnd", "ShdPnd")}
        if any(int(status[k], 16) & SIGKILL_BIT for k in ("SigPnd", "ShdPnd")):
            seen.sigkill_pending = True
        time.sleep(0.05)
    return seen


def read_only(directories):
    """The command prefix that runs a command with `directories` read-only for it alone:
    read-only bind mounts in a mount namespace of its own (`unshare -m`), since root writes
    through a directory's mode but not through a read-only mount. Skips the test where that is
    not permitted, saying why."""
    problem = _read_only_mounts_problem()
    if problem:
        pytest.skip(f"a read-only directory needs a read-only bind mount: {problem}")
    script = "".join(
        f"mount --bind {d} {d} && mount -o remount,bind,ro {d} && "
        for d in map(shlex.quote, map(str, directories))
    )
    return ["unshare", "-m", "--propagation", "private", "sh", "-c", script + 'exec "$@"', "sh"]


@functools.cache
def _read_only_mounts_problem():
    """None where `unshare -m` and a read-only bind mount work here, else why not."""
    if not shutil.which("unshare"):
        return "no unshare command"
    with tempfile.TemporaryDirectory() as directory:
        probe = subprocess.run(
            [
                "unshare",
                "-m",
                "--propagation",
                "private",
                "sh",
                "-c",
                'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && ! touch "$1/x"',
                "sh",
                directory,
            ],
            capture_output=True,
            text=True,
        )
        if probe.returncode != 0 or os.path.exists(os.path.join(directory, "x")):
            return (probe.stderr.strip() or "the mount did not stop a write").splitlines()[-1]
    return None
