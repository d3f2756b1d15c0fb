"""Starting a run's workers: one worker, N ranks started as torchrun starts them, or N ranks as
one Open MPI job; each supervised by bench.run.supervisor and turned into one raw result.

Whatever happens (a crash, a hang, a kill, a signal here), the caller gets a raw result: rank
0's own result.json when it wrote one and the run was not cut short, else a `failed` one with
the reason and the tail of its output; a data-parallel run adds `ranks` (each rank's exit,
status, error and CPUs) and `interrupted` (which signal) when a signal ended it.
"""

import json
import os
import shlex
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .. import signals
from ..errors import EnvironmentNotFound
from . import r_worker, system
from .supervisor import Supervisor, exit_in_words


@dataclass(frozen=True)
class Workers:
    """What starts a run's workers: the interpreter, its time limit and environment, how
    (bench_shared.contract.LAUNCHES: one_process, processes, mpiexec), how many (devices),
    each rank's share of `cpus` on a CPU, a multi-node Slurm step's `layout`
    (bench.run.slurm.node_layout) and how often the host is sampled while they run."""

    python: str
    timeout_s: float
    env: dict
    how: str = "one_process"
    devices: int = 1
    cpus: Optional[list] = None
    layout: Optional[dict] = None
    watch_interval_s: Optional[float] = None


def start(workers: Workers, run, run_dir):
    """The run's worker(s), started as `workers` says; rank 0's raw result (with a layout:
    this node's first rank's)."""
    if workers.devices == 1 or workers.how == "one_process":  # one worker, every device
        return run_worker(
            workers.python, run, run_dir, workers.timeout_s, workers.env, workers.watch_interval_s
        )
    if workers.how == "processes":
        return run_data_parallel(workers, run, run_dir)
    return run_mpiexec(workers, run, run_dir)


def worker_command(python, run_file, run=None):
    """`python -m bench_shared.worker run.json`; for a row written in R (run["framework"]
    ["r_models"]) `Rscript packages/r/worker.R run.json`, which runs the same worker in
    `python` through reticulate (RETICULATE_PYTHON, worker_env.worker_environment)."""
    if run and run["framework"].get("r_models"):
        return [r_worker.rscript(), str(r_worker.WORKER), str(run_file)]
    return [python, "-m", "bench_shared.worker", str(run_file)]


def rank_file(run_dir, stem, rank, suffix):
    """worker.log, worker.rank1.log, ...: rank 0's files keep the one-worker names."""
    return Path(run_dir) / (f"{stem}{suffix}" if rank == 0 else f"{stem}.rank{rank}{suffix}")


def _write_run(run_dir, rank, run, **extra):
    """run.json (run.rank<r>.json) for one worker; (run file, its result's path), the stale
    result of an earlier attempt removed. orchestrator_pid: the worker asks to be killed when
    this process dies (bench_shared.lifeline)."""
    output = rank_file(run_dir, "worker_result", rank, ".json")
    run_file = rank_file(run_dir, "run", rank, ".json")
    run_file.write_text(
        json.dumps(
            dict(run, output=str(output), orchestrator_pid=os.getpid(), **extra),
            indent=1,
            sort_keys=True,
        )
    )
    output.unlink(missing_ok=True)
    return run_file, output


def _read_result(output):
    """(the worker's raw result or None, why it could not be read or None)."""
    if not output.is_file():
        return None, None
    try:
        raw = json.loads(output.read_text())
    except ValueError as exc:
        return None, f"the worker's result {output} is not JSON ({exc})"
    return (raw, None) if isinstance(raw, dict) else (None, f"{output} is not a result")


def _prepared(run_dir):
    run_dir = Path(run_dir).absolute()  # the worker starts in run_dir: every path absolute
    run_dir.mkdir(parents=True, exist_ok=True)
    return run_dir


def run_worker(python, run, run_dir, timeout_s, env, watch_interval_s=None):
    """One worker; its raw result with exit_code and output_tail added, and host_samples
    (bench.run.hostwatch) where watch_interval_s asks for them."""
    run_dir = _prepared(run_dir)
    run_file, output = _write_run(run_dir, 0, run)
    with signals.deferred() as pending:
        supervisor = Supervisor(
            timeout_s,
            pending,
            subject="worker",
            together=False,
            watch_interval_s=watch_interval_s,
        )
        member = supervisor.start(
            worker_command(python, run_file, run), env, run_dir, run_dir / "worker.log"
        )
        reason = supervisor.wait()
    if pending:
        reason = supervisor.interrupted()
    code = member.code
    raw = None
    if reason is None:
        raw, reason = _read_result(output)
    if raw is None:
        if reason is None:
            reason = (
                f"worker {exit_in_words(code)}"
                if code < 0
                else f"worker exited with status {code} without writing a result"
            )
        raw = {"status": "failed", "error": reason, "timings": {}}
    raw["output_tail"] = list(member.tail)
    raw["exit_code"] = code
    raw["host_samples"] = supervisor.host_samples()
    if pending:
        raw["interrupted"] = pending.what
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
    if not cpus:
        return [None] * count
    size = len(cpus) // count
    return [list(cpus[i * size : (i + 1) * size]) for i in range(count)]


def _one_result(raws, ranks, reason, pending, devices, no_result):
    """Rank 0's raw result for the whole run: failed, with the first rank's own words, when a
    rank failed or the run was cut short; every rank's entry in `ranks`."""
    said = [r for r, raw in zip(ranks, raws) if raw is not None] + ranks  # own words first
    cause = next((r for r in said if r["status"] != "ok" and r.get("error")), None)
    if reason and cause and f"rank {cause['rank']}:" not in reason:
        reason += f" (rank {cause['rank']}: {cause['error']})"
    raw = raws[0] if not pending else None
    if raw is None:
        raw = {"status": "failed", "error": reason or no_result, "timings": {}}
    elif raw["status"] == "ok":
        bad = [r for r in ranks[1:] if r["status"] != "ok" or r["exit_code"] != 0]
        if reason or bad:
            first = cause or bad[0]
            why = first.get("error") or exit_in_words(first["exit_code"])
            raw["status"] = "failed"
            raw["error"] = reason or f"rank {first['rank']} of {devices}: {why}"
    raw["ranks"] = ranks
    if pending:
        raw["interrupted"] = pending.what
    return raw


def _rank_entry(rank, raw, exit_code, pid, cpus):
    entry = {
        "rank": rank,
        "exit_code": exit_code,
        "pid": pid,
        "status": (raw or {}).get("status", "failed"),
        "cpus": cpus,
    }
    if raw and raw.get("error"):
        entry["error"] = raw["error"]
    return entry


def _meeting(layout, devices):
    """(address, port, every rank's port) where the ranks meet: the Slurm layout's, or free
    ports here."""
    if layout:
        return layout["master_addr"], layout["master_port"], layout["worker_ports"]
    port, *worker_ports = free_ports(devices + 1)
    return "127.0.0.1", port, worker_ports


def _rank_variables(rank, local_rank, devices, meeting):
    """torchrun's variables for one rank, and BENCH_WORKER_PORTS."""
    addr, port, worker_ports = meeting
    return {
        "RANK": str(rank),
        "WORLD_SIZE": str(devices),
        "LOCAL_RANK": str(local_rank),
        "MASTER_ADDR": addr,
        "MASTER_PORT": str(port),
        "BENCH_WORKER_PORTS": ",".join(map(str, worker_ports)),
    }


def run_data_parallel(workers: Workers, run, run_dir):
    """N workers as one run: each with RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT
    (torchrun's variables), BENCH_WORKER_PORTS (a port for each rank, for frameworks whose
    every rank listens) and, on a CPU, pinned to its share of `cpus`; rank 0's output on the
    console (and worker.log), every other rank's in worker.rank<r>.log. A rank that fails takes
    the others down. Returns rank 0's raw result with `ranks`.

    `layout` (bench.run.slurm.node_layout, a multi-node Slurm step): this node starts only its
    ranks (rank_offset on), meeting at the layout's address and port; its first rank's raw
    result comes back."""
    layout, devices = workers.layout, workers.devices
    run_dir = _prepared(run_dir)
    local = layout["local_devices"] if layout else devices
    shares = cpu_shares(workers.cpus, local)
    meeting = _meeting(layout, devices)
    offset = layout["rank_offset"] if layout else 0
    outputs, members = [], []
    with signals.deferred() as pending:
        supervisor = Supervisor(
            workers.timeout_s,
            pending,
            subject="the workers",
            watch_interval_s=workers.watch_interval_s,
        )
        try:
            for index in range(local):
                rank = offset + index
                local_rank = index + (layout["local_rank_offset"] if layout else 0)
                run_file, output = _write_run(run_dir, rank, run)
                members.append(
                    supervisor.start(
                        worker_command(workers.python, run_file, run),
                        dict(workers.env, **_rank_variables(rank, local_rank, devices, meeting)),
                        run_dir,
                        rank_file(run_dir, "worker", rank, ".log"),
                        name=f"rank {rank}",
                        echo=index == 0,
                        cpus=shares[index],
                    )
                )
                outputs.append(output)
        finally:
            reason = supervisor.wait()  # also when a start failed: the started ones end
    if pending:
        reason = supervisor.interrupted()
    raws = [_read_result(output)[0] for output in outputs]
    ranks = [
        _rank_entry(offset + i, raw, m.code, m.proc.pid, shares[i])
        for i, (raw, m) in enumerate(zip(raws, members))
    ]
    raw = _one_result(
        raws,
        ranks,
        reason,
        pending,
        devices,
        f"rank {offset} exited with status {members[0].code} without writing a result",
    )
    raw["output_tail"] = list(members[0].tail)
    raw["exit_code"] = members[0].code
    raw["host_samples"] = supervisor.host_samples()
    return raw


# what a worker exits with for each status it writes (bench_shared.worker's EXIT_*)
WORKER_EXIT = {"ok": 0, "failed": 1, "unsupported": 3}


def find_mpiexec():
    """(path, version line) of Open MPI's mpiexec on PATH; EnvironmentNotFound naming the fix.
    Open MPI's: the command line below uses its options, and the MPI frameworks here link it
    (CNTK 2.7 through bench_cntk.mpi_shim)."""
    path, version = system.find_mpi()
    if path is None:
        raise EnvironmentNotFound(system.missing("mpi"))
    return path, version


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


def _mpi_ranks(raws, shares, logs):
    """Each MPI rank's entry: its exit code is its result's (mpiexec reports the job's)."""
    ranks = []
    for rank, raw in enumerate(raws):
        entry = _rank_entry(
            rank,
            raw,
            WORKER_EXIT.get((raw or {}).get("status")),
            (raw or {}).get("pid"),
            shares[rank],
        )
        if raw is None:
            entry["error"] = f"wrote no result (see {logs[rank].name})"
        ranks.append(entry)
    return ranks


def run_mpiexec(workers: Workers, run, run_dir):
    """N workers as one MPI job (`mpiexec -n 1 worker run.json : -n 1 worker run.rank1.json
    ...`): MPI gives each its rank (OMPI_COMM_WORLD_*, read by bench_shared.distributed), the
    framework joins them over MPI in setup(). On a CPU each rank pins itself to its share of
    `cpus` (run.json `cpus`). The job is killed, every rank with it, as soon as a rank's
    result says it failed (Open MPI's own abort waits for an exit that an MPI_Finalize blocked
    on the other ranks may never come to). Returns rank 0's raw result with `ranks` (a rank's
    exit code is its result's: mpiexec reports only the job's) and `mpiexec` (path, version,
    exit code)."""
    env, devices = workers.env, workers.devices
    mpiexec, version = find_mpiexec()
    run_dir = _prepared(run_dir)
    shares = cpu_shares(workers.cpus, devices)
    run_files, outputs = [], []
    for rank in range(devices):
        extra = {"cpus": shares[rank]} if shares[rank] else {}
        run_file, output = _write_run(run_dir, rank, run, **extra)
        run_files.append(run_file)
        outputs.append(output)
    logs = [rank_file(run_dir, "worker", rank, ".log") for rank in range(devices)]
    if os.geteuid() == 0:  # containers and CI run as root, which Open MPI refuses by default
        env = dict(env, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

    def a_rank_failed():
        for rank, output in enumerate(outputs):
            raw = _read_result(output)[0]
            if raw is not None and raw.get("status") != "ok":
                return (
                    f"rank {rank}: {raw.get('error') or raw.get('status')}; mpiexec and "
                    "the other ranks were killed"
                )
        return None

    with signals.deferred() as pending:
        supervisor = Supervisor(
            workers.timeout_s,
            pending,
            subject=f"mpiexec and its {devices} workers",
            check=a_rank_failed,
            session=True,
            watch_interval_s=workers.watch_interval_s,
        )
        job = supervisor.start(
            mpiexec_command(mpiexec, workers.python, run_files, logs, run),
            env,
            run_dir,
            logs[0],
            name="mpiexec",
        )
        reason = supervisor.wait()
    if pending:
        reason = supervisor.interrupted()
    raws = [_read_result(output)[0] for output in outputs]
    ranks = _mpi_ranks(raws, shares, logs)
    if reason is None and job.code != 0:
        reason = f"mpiexec exited with status {job.code}"
    raw = _one_result(
        raws,
        ranks,
        reason,
        pending,
        devices,
        f"rank 0 wrote no result (mpiexec exited with status {job.code})",
    )
    raw["output_tail"] = list(job.tail)
    raw["exit_code"] = ranks[0]["exit_code"]
    raw["host_samples"] = supervisor.host_samples()
    raw["mpiexec"] = {"path": mpiexec, "version": version, "exit_code": job.code}
    return raw
