"""The worker lifecycle: write run.json, start the worker, stream its output, enforce a timeout.

Whatever happens to the worker (a crash, a hang, a kill, Ctrl-C here), the caller gets a raw
result: the worker's own result.json when it wrote one, else a `failed` one with the reason
and the tail of its output.
"""
import collections
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from bench_shared import progress as events

from .errors import Terminated
from .progress import ProgressView

TAIL_LINES = 60


def _pump(stream, sinks, tail, view=None):
    for line in iter(stream.readline, ""):
        event = events.parse(line) if view is not None else None
        if event is not None:
            view.handle(event)
            continue
        tail.append(line.rstrip("\n"))
        for sink in sinks:
            sink.write(line)
            sink.flush()
    stream.close()


def _kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the worker and anything it started
    except ProcessLookupError:
        pass
    proc.wait()


def run_worker(python, run, run_dir: Path, timeout_s, env):
    """Run one worker and return its raw result (with exit_code and output_tail added)."""
    run_dir = Path(run_dir).absolute()  # the worker starts in run_dir: every path absolute
    run_dir.mkdir(parents=True, exist_ok=True)
    run_file, output = run_dir / "run.json", run_dir / "worker_result.json"
    # orchestrator_pid: the worker asks to be killed when this process dies (lifeline.py)
    run = dict(run, output=str(output), orchestrator_pid=os.getpid())
    run_file.write_text(json.dumps(run, indent=1, sort_keys=True))
    output.unlink(missing_ok=True)
    tail = collections.deque(maxlen=TAIL_LINES)
    view = ProgressView()
    with open(run_dir / "worker.log", "w") as log:
        proc = subprocess.Popen([python, "-m", "bench_shared.worker", str(run_file)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env, cwd=run_dir, start_new_session=True, bufsize=1)
        pumps = [threading.Thread(target=_pump, args=(proc.stdout, [sys.stdout, log], tail, view)),
                 threading.Thread(target=_pump, args=(proc.stderr, [sys.stderr, log], tail))]
        for pump in pumps:
            pump.daemon = True
            pump.start()
        reason = None
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill(proc)
            reason = f"worker timed out after {timeout_s:g} s and was killed"
        except KeyboardInterrupt as exc:
            _kill(proc)
            interrupted = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"
            reason = f"interrupted ({interrupted}); the worker was killed"
        for pump in pumps:
            pump.join(timeout=10)
        view.close()
    code = proc.returncode
    raw = None
    if reason is None and output.is_file():
        try:
            raw = json.loads(output.read_text())
        except ValueError as exc:
            reason = f"the worker's result {output} is not JSON ({exc})"
    if raw is None:
        if reason is None:
            reason = (f"worker died with signal {-code}" if code < 0
                      else f"worker exited with status {code} without writing a result")
        raw = {"status": "failed", "error": reason, "timings": {}}
    raw["output_tail"] = list(tail)
    raw["exit_code"] = code
    if reason and reason.startswith("interrupted"):
        raw["interrupted"] = interrupted
    return raw
