"""`python -m bench` as a test drives it by hand: a process it can signal, its output read
up to a marker, its children and their end, and result files read as strict JSON."""
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

FAST = ["framework=fake", "preset=smoke"]

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="/proc and the parent-death signal are Linux's")


def strict_json(path):
    """A result file as strict JSON: a bare NaN or Infinity is an error."""
    def refuse(name):
        raise ValueError(f"{path}: {name} is not JSON")

    return json.loads(Path(path).read_text(), parse_constant=refuse)


def start(args, env, cwd):
    """`python -m bench` in a subprocess that a test can Ctrl-C: a shell's background job (CI)
    starts with SIGINT ignored, and Python keeps that unless it is restored."""
    return subprocess.Popen([sys.executable, "-m", "bench", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


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
