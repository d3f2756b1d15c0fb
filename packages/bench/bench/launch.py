"""The worker lifecycle: write run.json, start the worker, stream its output, enforce a timeout.

Whatever happens to the worker (a crash, a hang, a kill, Ctrl-C here), the caller gets a raw
result: the worker's own result.json when it wrote one, else a `failed` one with the reason
and the tail of its output. A data-parallel run (`devices=N`) is N workers supervised as one
(run_data_parallel): started as torchrun starts them, all killed when one fails, times out or
is interrupted, one result (rank 0's) with every rank's exit recorded; or started by Open MPI's
`mpiexec` (run_mpiexec, for frameworks whose data-parallel idiom is an MPI job), supervised
the same way.
"""
import collections
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from bench_shared import progress as events

from . import r_worker
from .errors import EnvironmentNotFound, Terminated
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


def worker_command(python, run_file, run=None):
    """`python -m bench_shared.worker run.json`; for a row written in R (run["framework"]
    ["r_models"]) `Rscript packages/r/worker.R run.json`, which runs the same worker in
    `python` through reticulate (RETICULATE_PYTHON, app.worker_environment)."""
    if run and run["framework"].get("r_models"):
        return [r_worker.rscript(), str(r_worker.WORKER), str(run_file)]
    return [python, "-m", "bench_shared.worker", str(run_file)]


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
        proc = subprocess.Popen(worker_command(python, run_file, run),
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
                worker_command(python, run_file, run), stdout=subprocess.PIPE,
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


# what a worker exits with for each status it writes (bench_shared.worker's EXIT_*)
WORKER_EXIT = {"ok": 0, "failed": 1, "unsupported": 3}
MPIEXEC_FIX = ("install Open MPI's launcher (Debian/Ubuntu: `apt-get install openmpi-bin`; "
               "other systems: Open MPI's package) so that `mpiexec` is on PATH")


def find_mpiexec():
    """(path, version line) of Open MPI's mpiexec on PATH; EnvironmentNotFound naming the fix.
    Open MPI's: the command line below uses its options, and the MPI frameworks here link it
    (CNTK 2.7 through bench_cntk.mpi_shim)."""
    path = shutil.which("mpiexec")
    if path is None:
        raise EnvironmentNotFound(f"mpiexec is not on PATH: {MPIEXEC_FIX}")
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60,
                             stdin=subprocess.DEVNULL)
        version = (out.stdout + out.stderr).strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EnvironmentNotFound(f"{path} --version failed ({exc}): {MPIEXEC_FIX}") from exc
    if "Open MPI" not in version and "OpenRTE" not in version:
        raise EnvironmentNotFound(f"{path} is not Open MPI's mpiexec ({version.splitlines()[:1]})"
                                  f": {MPIEXEC_FIX}, first on PATH")
    return path, version.splitlines()[0]


def mpiexec_command(mpiexec, python, run_files, logs, run=None):
    """One mpiexec job of len(run_files) ranks, one application context per rank (rank r runs
    the worker on its own run.json); rank 0's output through mpiexec's, every other rank's
    into its own log. Open MPI binds nothing (each worker pins itself to its run.json's
    `cpus`) and runs more ranks than cores if asked."""
    command = [mpiexec, "--oversubscribe", "--bind-to", "none"]
    for rank, (run_file, log) in enumerate(zip(run_files, logs)):
        worker = worker_command(python, run_file, run)
        if rank > 0:
            worker = ["sh", "-c", f'exec "$0" "$@" >{shlex.quote(str(log))} 2>&1', *worker]
        command += ([":"] if rank else []) + ["-n", "1", *worker]
    return command


def run_mpiexec(python, run, run_dir: Path, timeout_s, env, devices, cpus=None):
    """N workers as one MPI job (`mpiexec -n 1 worker run.json : -n 1 worker run.rank1.json
    ...`): MPI gives each its rank (OMPI_COMM_WORLD_*, read by bench_shared.distributed), the
    framework joins them over MPI in setup(). On a CPU each rank pins itself to its share of
    `cpus` (run.json `cpus`). Rank 0's output on the console (and worker.log), every other
    rank's in worker.rank<r>.log. The job is killed, every rank with it, when a rank reports a
    failure (the others would wait for it in a collective), on timeout and on Ctrl-C. Returns
    rank 0's raw result with `ranks` (as run_data_parallel's; a rank's exit code is its
    result's, mpiexec reporting only the job's) and `mpiexec` (path, version, exit code)."""
    mpiexec, version = find_mpiexec()
    run_dir = Path(run_dir).absolute()
    run_dir.mkdir(parents=True, exist_ok=True)
    shares = cpu_shares(cpus, devices) if cpus else [None] * devices
    run_files, outputs, logs = [], [], []
    for rank in range(devices):
        output = _rank_file(run_dir, "worker_result", rank, ".json")
        run_file = _rank_file(run_dir, "run", rank, ".json")
        rank_run = dict(run, output=str(output), orchestrator_pid=os.getpid())
        if shares[rank]:
            rank_run["cpus"] = shares[rank]
        run_file.write_text(json.dumps(rank_run, indent=1, sort_keys=True))
        output.unlink(missing_ok=True)
        run_files.append(run_file)
        outputs.append(output)
        logs.append(_rank_file(run_dir, "worker", rank, ".log"))
    if os.geteuid() == 0:  # containers and CI run as root, which Open MPI refuses by default
        env = dict(env, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    tail = collections.deque(maxlen=TAIL_LINES)
    view = ProgressView()
    reason = interrupted = None
    with open(logs[0], "w") as log:
        proc = subprocess.Popen(mpiexec_command(mpiexec, python, run_files, logs, run),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, text=True, env=env, cwd=run_dir,
                                start_new_session=True, bufsize=1)
        pumps = [threading.Thread(target=_pump, args=(proc.stdout, [sys.stdout, log], tail, view)),
                 threading.Thread(target=_pump, args=(proc.stderr, [sys.stderr, log], tail))]
        for pump in pumps:
            pump.daemon = True
            pump.start()
        try:
            reason = _supervise_job(proc, outputs, timeout_s)
        except KeyboardInterrupt as exc:
            _kill_session(proc)
            interrupted = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"
            reason = f"interrupted ({interrupted}); mpiexec and its {devices} workers were killed"
        for pump in pumps:
            pump.join(timeout=10)
        view.close()
    raws = [_read_result(output) for output in outputs]
    ranks = []
    for rank, raw in enumerate(raws):
        entry = {"rank": rank, "exit_code": WORKER_EXIT.get((raw or {}).get("status")),
                 "pid": (raw or {}).get("pid"), "status": (raw or {}).get("status", "failed"),
                 "cpus": shares[rank]}
        if raw and raw.get("error"):
            entry["error"] = raw["error"]
        elif raw is None:
            entry["error"] = f"wrote no result (see {logs[rank].name})"
        ranks.append(entry)
    # the first rank that said why it failed
    cause = next((r for r in ranks if r["status"] != "ok" and raws[r["rank"]]), None)
    if reason is None and proc.returncode != 0:
        reason = f"mpiexec exited with status {proc.returncode}"
    if reason and cause and f"rank {cause['rank']}:" not in reason:
        reason += f" (rank {cause['rank']}: {cause['error']})"
    raw = raws[0] if interrupted is None else None
    if raw is None:
        raw = {"status": "failed", "timings": {},
               "error": reason or f"rank 0 wrote no result (mpiexec exited with status "
                                  f"{proc.returncode})"}
    elif raw["status"] == "ok" and (reason or cause):
        raw["status"] = "failed"
        raw["error"] = reason or f"rank {cause['rank']} of {devices}: {cause['error']}"
    raw["output_tail"] = list(tail)
    raw["exit_code"] = ranks[0]["exit_code"]
    raw["ranks"] = ranks
    raw["mpiexec"] = {"path": mpiexec, "version": version, "exit_code": proc.returncode}
    if interrupted:
        raw["interrupted"] = interrupted
    return raw


def _read_result(output):
    try:
        return json.loads(output.read_text()) if output.is_file() else None
    except ValueError:
        return None


def _supervise_job(proc, outputs, timeout_s):
    """Wait for mpiexec; the reason the job was cut short, or None. A rank whose result says
    it failed takes the job down at once (Open MPI's own abort waits for its exit, which an
    MPI_Finalize blocked on the other ranks may never come to)."""
    deadline = time.monotonic() + timeout_s
    while proc.poll() is None:
        for rank, output in enumerate(outputs):
            raw = _read_result(output)
            if raw is not None and raw.get("status") != "ok":
                _kill_session(proc)
                return (f"rank {rank}: {raw.get('error') or raw.get('status')}; mpiexec and "
                        "the other ranks were killed")
        if time.monotonic() > deadline:
            _kill_session(proc)
            return f"the workers timed out after {timeout_s:g} s and were killed with mpiexec"
        time.sleep(0.2)
    return None


def _kill_session(proc):
    """SIGKILL mpiexec and every process of its session: Open MPI starts each rank in a
    process group of its own, which killing mpiexec's group would leave running."""
    for pid in _session_members(proc.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _kill(proc)


def _session_members(sid):
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[3]) == sid:  # state, ppid, pgrp, session
            members.append(int(entry))
    return members
