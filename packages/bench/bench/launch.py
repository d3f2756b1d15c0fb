"""The worker lifecycle: write run.json, start the worker, stream its output, enforce a timeout.

Whatever happens to the worker (a crash, a hang, a kill, Ctrl-C here), the caller gets a raw
result: the worker's own result.json when it wrote one, else a `failed` one with the reason
and the tail of its output. A data-parallel run (`devices=N`) is N workers supervised as one
(run_data_parallel): started as torchrun starts them, all killed when one fails, times out or
is interrupted, one result (rank 0's) with every rank's exit recorded.
"""
import collections
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
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


def free_ports(count):
    """`count` distinct TCP ports on 127.0.0.1 that nobody listens on now (each socket held
    until all are picked): the rendezvous (MASTER_PORT) and one per rank (BENCH_WORKER_PORTS)."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sockets.append(sock)
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def cpu_shares(cpus, count):
    """`cpus` split into `count` equal, contiguous shares (the remainder left unused, so that
    no rank has more cores than another)."""
    size = len(cpus) // count
    return [list(cpus[i * size:(i + 1) * size]) for i in range(count)]


def _rank_file(run_dir, stem, rank, suffix):
    return run_dir / (f"{stem}{suffix}" if rank == 0 else f"{stem}.rank{rank}{suffix}")


def run_data_parallel(python, run, run_dir: Path, timeout_s, env, devices, cpus=None,
                      layout=None):
    """N workers as one run: each with RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT
    (torchrun's variables), BENCH_WORKER_PORTS (a port for each rank, for frameworks whose
    every rank listens) and, on a CPU, pinned to its share of `cpus`; rank 0's output on
    the console (and worker.log), every other rank's in worker.rank<r>.log. Returns rank 0's
    raw result with `ranks`: each rank's exit code, status, error and CPUs.

    `layout` (bench.slurm.node_layout, a multi-node Slurm step): this node starts only its
    ranks (rank_offset on), meeting at the layout's address and port; its first rank's raw
    result comes back."""
    run_dir = Path(run_dir).absolute()
    run_dir.mkdir(parents=True, exist_ok=True)
    local = layout["local_devices"] if layout else devices
    shares = cpu_shares(cpus, local) if cpus else [None] * local
    if layout:
        addr, port, worker_ports = (layout["master_addr"], layout["master_port"],
                                    layout["worker_ports"])
    else:
        addr, (port, *worker_ports) = "127.0.0.1", free_ports(devices + 1)
    offset = layout["rank_offset"] if layout else 0
    procs, tails, pumps, logs, outputs = [], [], [], [], []
    view = ProgressView()
    try:
        for index in range(local):
            rank = offset + index
            local_rank = index + (layout["local_rank_offset"] if layout else 0)
            output = _rank_file(run_dir, "worker_result", rank, ".json")
            run_file = _rank_file(run_dir, "run", rank, ".json")
            run_file.write_text(json.dumps(dict(run, output=str(output),
                                                orchestrator_pid=os.getpid()),
                                           indent=1, sort_keys=True))
            output.unlink(missing_ok=True)
            rank_env = dict(env, RANK=str(rank), WORLD_SIZE=str(devices),
                            LOCAL_RANK=str(local_rank), MASTER_ADDR=addr, MASTER_PORT=str(port),
                            BENCH_WORKER_PORTS=",".join(map(str, worker_ports)))
            share = shares[index]
            log = open(_rank_file(run_dir, "worker", rank, ".log"), "w")
            tail = collections.deque(maxlen=TAIL_LINES)
            proc = subprocess.Popen(
                [python, "-m", "bench_shared.worker", str(run_file)], stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True, env=rank_env, cwd=run_dir,
                start_new_session=True, bufsize=1,
                preexec_fn=(lambda share=share: os.sched_setaffinity(0, share)) if share else None)
            echo = [sys.stdout, log] if index == 0 else [log]
            errors = [sys.stderr, log] if index == 0 else [log]
            for stream, sinks, v in ((proc.stdout, echo, view if index == 0 else None),
                                     (proc.stderr, errors, None)):
                pump = threading.Thread(target=_pump, args=(stream, sinks, tail, v), daemon=True)
                pump.start()
                pumps.append(pump)
            procs.append(proc)
            tails.append(tail)
            logs.append(log)
            outputs.append(output)
        reason = _supervise(procs, timeout_s)
    except KeyboardInterrupt as exc:
        for proc in procs:
            _kill(proc)
        interrupted = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"
        reason = f"interrupted ({interrupted}); the {len(procs)} workers were killed"
    finally:
        for pump in pumps:
            pump.join(timeout=10)
        view.close()
        for log in logs:
            log.close()
    ranks, raws = [], []
    for index, (proc, output) in enumerate(zip(procs, outputs)):
        rank = offset + index
        raw = None
        if output.is_file():
            try:
                raw = json.loads(output.read_text())
            except ValueError:
                raw = None
        raws.append(raw)
        entry = {"rank": rank, "exit_code": proc.returncode, "pid": proc.pid,
                 "status": (raw or {}).get("status", "failed"), "cpus": shares[index]}
        if raw and raw.get("error"):
            entry["error"] = raw["error"]
        ranks.append(entry)
    interrupted_run = bool(reason and reason.startswith("interrupted"))
    raw = raws[0] if raws and raws[0] is not None and not interrupted_run else None
    cause = next((r for r in ranks if r["status"] != "ok" and r.get("error")), None)
    if raw is None and reason is None:
        reason = (f"rank {offset} exited with status {procs[0].returncode} without writing a "
                  "result")
    if reason and cause:  # the failing rank's own words
        reason += f" (rank {cause['rank']}: {cause['error']})"
    if raw is None:
        raw = {"status": "failed", "error": reason, "timings": {}}
    elif raw["status"] == "ok":
        bad = [r for r in ranks[1:] if r["status"] != "ok" or r["exit_code"] != 0]
        if bad or reason:
            first = cause or (bad[0] if bad else None)
            why = first and (first.get("error") or _how(first["exit_code"]))
            raw["status"] = "failed"
            raw["error"] = reason or f"rank {first['rank']} of {devices} {why}"
    raw["output_tail"] = list(tails[0]) if tails else []
    raw["exit_code"] = procs[0].returncode if procs else None
    raw["ranks"] = ranks
    if interrupted_run:
        raw["interrupted"] = interrupted
    return raw


def _supervise(procs, timeout_s):
    """Wait for every rank; the reason the run was cut short, or None. A rank that fails takes
    the others down (in a collective they would wait for it forever)."""
    deadline = time.monotonic() + timeout_s
    while True:
        codes = [proc.poll() for proc in procs]
        if all(code is not None for code in codes):
            return None
        failed = [(rank, code) for rank, code in enumerate(codes) if code not in (None, 0)]
        if failed:
            for proc in procs:
                _kill(proc)
            rank, code = failed[0]
            return f"rank {rank} {_how(code)}; the other ranks were killed"
        if time.monotonic() > deadline:
            for proc in procs:
                _kill(proc)
            return f"the workers timed out after {timeout_s:g} s and were killed"
        time.sleep(0.1)


def _how(code):
    return f"died with signal {-code}" if code < 0 else f"exited with status {code}"
