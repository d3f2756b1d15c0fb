"""Run noxfile.py's default sessions in parallel lanes: what `.ci/run` does with no arguments.

One session at a time leaves half of a two-core machine idle (a session spends much of its
time installing packages and starting interpreters, one core at a time), and the suite ran
past an hour that way. Here each lane is one `nox -s <session>` at a time; the longest
sessions start first, and a session whose tests use another session's environment waits for
that one. Each session's output goes to its own log, printed whole when it finishes (never
interleaved); the last lines sum up every session, as nox's own summary does.

    python .ci/sessions.py NOX-COMMAND...      # e.g. venv/bin/python -m nox --download-python never
"""

import importlib.util
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Minutes each session took in one two-lane .ci/run from a fresh clone (2-core AMD EPYC Zen 3,
# 2026-12-07: 51 min in all, the two lanes within a minute of each other): only the order they
# start in, longest first, comes from these; a session not named here counts as 5.
MINUTES = {
    "core": 27,
    "tensorflow": 10,
    "torch": 10,
    "mxnet": 7,
    "keras_torch": 7,
    "cntk": 5,
    "keras_jax": 5,
    "theano": 4,
    "r": 4,
    "cntk_e2e": 4,
    "chainer": 4,
    "flax": 4,
    "paddle": 3,
    "slurm": 3,
    "onnxruntime": 2,
    "chainer_ideep": 1,
    "lint": 0,
}


def needs_of(noxfile):
    """{session: the sessions that build the environments its tests run in}, from noxfile.py's
    table: X_e2e runs X's workers, a session's `e2e_also` environments are built by their own
    sessions, and r drives the environments of the R rows' frameworks."""
    needs = {name: set(env.e2e_also) for name, env in noxfile.ENVIRONMENTS.items()}
    needs.update({f"{name}_e2e": {name} for name, env in noxfile.ENVIRONMENTS.items() if env.e2e})
    needs["r"] = set(noxfile.R_ENVIRONMENTS)
    return needs


def load_noxfile():
    spec = importlib.util.spec_from_file_location("noxfile", ROOT / "noxfile.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def default_sessions(nox):
    """The sessions `nox` with no -s runs (marked * in `nox -l`), in the noxfile's order."""
    listing = subprocess.run([*nox, "-l"], cwd=ROOT, capture_output=True, text=True, check=True)
    return re.findall(r"^\* (\S+)", listing.stdout, re.M)


def lanes():
    """One lane per CPU this process may use, at most 4 (every session holds gigabytes)."""
    given = os.environ.get("CI_LANES")
    return int(given) if given else max(1, min(4, len(os.sched_getaffinity(0))))


class Runner:
    def __init__(self, nox, sessions, logs, needs):
        self.nox, self.logs, self.needs = nox, logs, needs
        self.waiting = sorted(sessions, key=lambda s: -MINUTES.get(s, 5))
        self.outcomes = {}  # session -> (status, seconds)
        self.running = {}  # session -> Popen
        self.lock = threading.Condition()

    def next_session(self):
        """The longest waiting session whose needs are done; None when nothing is left."""
        with self.lock:
            while self.waiting:
                pending = set(self.waiting) | set(self.running)
                for session in self.waiting:
                    if not self.needs.get(session, set()) & pending:
                        self.waiting.remove(session)
                        return session
                self.lock.wait()
            return None

    def lane(self):
        while (session := self.next_session()) is not None:
            self.run(session)

    def run(self, session):
        log = self.logs / f"{session}.log"
        start = time.monotonic()
        print(f"ci > {session}: started", flush=True)
        with open(log, "w") as out, self.lock:
            proc = subprocess.Popen(
                [*self.nox, "-s", session],
                cwd=ROOT,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            self.running[session] = proc
        code = proc.wait()
        seconds = time.monotonic() - start
        text = log.read_text(errors="replace")
        status = (
            "skipped"
            if code == 0 and re.search(r"Session \S+ skipped", text)
            else "success"
            if code == 0
            else "failed"
        )
        with self.lock:
            del self.running[session]
            self.outcomes[session] = (status, seconds)
            print(f"\n{'=' * 30} {session}: {status} in {minutes(seconds)} {'=' * 30}")
            print(text, end="" if text.endswith("\n") else "\n", flush=True)
            self.lock.notify_all()

    def stop(self, *_):
        with self.lock:
            self.waiting.clear()
            for proc in self.running.values():
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
            self.lock.notify_all()


def minutes(seconds):
    return f"{seconds / 60:.0f} min" if seconds >= 60 else f"{seconds:.0f} s"


def main():
    nox = sys.argv[1:]
    sessions = default_sessions(nox)
    count = lanes()
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ci-sessions-") as logs:
        runner = Runner(nox, sessions, Path(logs), needs_of(load_noxfile()))
        signal.signal(signal.SIGTERM, runner.stop)
        print(
            f"ci > {len(sessions)} sessions in {count} lanes: {' '.join(runner.waiting)}",
            flush=True,
        )
        threads = [threading.Thread(target=runner.lane) for _ in range(count)]
        for thread in threads:
            thread.start()
        try:
            for thread in threads:
                thread.join()
        except KeyboardInterrupt:
            runner.stop()
            for thread in threads:
                thread.join()
    print(
        f"\nci > Ran {len(runner.outcomes)} sessions in {minutes(time.monotonic() - start)} "
        f"({count} lanes):"
    )
    for session in sessions:
        status, seconds = runner.outcomes.get(session, ("not run", 0))
        print(f"ci > * {session}: {status}, took {minutes(seconds)}")
    failed = [
        s for s in sessions if runner.outcomes.get(s, ("not run",))[0] not in ("success", "skipped")
    ]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
