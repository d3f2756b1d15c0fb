"""data_parallel_launch mpiexec (CNTK's distributed learner, ChainerMN) through the CLI: the
fake framework's N workers started by Open MPI's real `mpiexec` as one job, supervised as one
run. The fake's ranks train independent replicas: what is tested is the orchestrator's side."""

import json
import os
import re
import shutil
from pathlib import Path

import pytest

SMALL = [
    "task=densenet",
    "preset=smoke",
    "task.image_size=32",
    "task.batch_size=16",
    "preset.train_examples=512",
    "preset.test_examples=256",
    "preset.epochs=2",
]
MPIEXEC = "+framework.capabilities.data_parallel_launch.cpu=mpiexec"
needs_mpiexec = pytest.mark.skipif(
    shutil.which("mpiexec") is None,
    reason="Open MPI's mpiexec is not on PATH (apt-get install openmpi-bin; .ci/run does)",
)


def processes_reading(path):
    """Pids of the processes whose command line names `path` (a rank's run.json)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            cmdline = Path("/proc", entry, "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue
        if str(path).encode() in cmdline:
            found.append(int(entry))
    return found


@needs_mpiexec
def test_mpiexec_starts_the_ranks_as_one_job_each_on_its_cores(run_bench):
    run = run_bench("framework=fake", "devices=2", *SMALL, MPIEXEC)
    assert run.returncode == 0, run.output
    r = run.result
    assert r["status"] == "ok" and r["mpiexec"]["exit_code"] == 0
    assert "Open MPI" in r["mpiexec"]["version"] or "OpenRTE" in r["mpiexec"]["version"]
    assert r["distributed"] == dict(
        r["distributed"], rank=0, world_size=2, processes=2, launch="mpiexec"
    )
    ranks = r["ranks"]
    assert [x["rank"] for x in ranks] == [0, 1]
    assert all(x["status"] == "ok" and x["exit_code"] == 0 for x in ranks), ranks
    run_dir = run.result_paths[0].parent
    other = json.loads((run_dir / "worker_result.rank1.json").read_text())
    assert other["distributed"]["rank"] == 1 and "accuracy" not in other
    # each rank pinned itself to the share the orchestrator gave it; the shares are disjoint
    pinned = [r["framework"]["settings"]["cpus"], other["framework"]["settings"]["cpus"]]
    assert pinned == [x["cpus"] for x in ranks] and not set(pinned[0]) & set(pinned[1])
    assert r["batches_per_epoch"] == 16 and r["accuracy"] > 0.6  # 512 / (2 x 16)
    # rank 0's progress on the console (through mpiexec's output), rank 1's log its own
    assert re.search(r"test mean ROC-AUC 0\.\d+ on 256", run.output), run.output
    assert (run_dir / "worker.log").is_file() and (run_dir / "worker.rank1.log").is_file()


@needs_mpiexec
def test_a_failing_rank_takes_the_job_down_and_a_hanging_one_is_killed(run_bench):
    # rank 0 would train for 32 x 1 s: it is killed long before, when rank 1 fails, however
    # slowly a busy machine starts rank 1
    crash = run_bench(
        "framework=fake",
        "devices=2",
        *SMALL,
        MPIEXEC,
        "framework.options.fault=crash",
        "framework.options.fault_rank=1",
        "framework.options.delay_ms=1000",
    )
    r = crash.result
    assert crash.returncode != 0 and r["status"] == "failed"
    assert "rank 1" in r["error"] and "fake crash requested" in r["error"], r["error"]
    assert r["ranks"][1]["status"] == "failed" and r["ranks"][1]["exit_code"] == 1
    assert r["ranks"][0]["exit_code"] is None and "wrote no result" in r["ranks"][0]["error"]
    run_dir = crash.result_paths[0].parent
    assert "fake: about to crash" in (run_dir / "worker.rank1.log").read_text()
    assert "fake: about to crash" not in crash.output  # not on the console, not in rank 0's
    hang = run_bench(
        "framework=fake",
        "devices=2",
        *SMALL,
        MPIEXEC,
        "preset.timeout_s=6",
        "framework.options.fault=hang",
        "framework.options.fault_rank=1",
    )
    r = hang.result
    assert r["status"] == "failed" and "timed out after 6 s" in r["error"], r["error"]
    run_dir = hang.result_paths[0].parent
    assert "fake: hanging" in (run_dir / "worker.rank1.log").read_text()
    # Open MPI puts each rank in a process group of its own: none may outlive the run
    assert processes_reading(run_dir / "run.rank1.json") == []


def test_without_mpiexec_the_error_names_the_fix(run_bench, bench_env, tmp_path):
    empty = tmp_path / "no-mpi"
    empty.mkdir()
    run = run_bench(
        "framework=fake", "devices=2", *SMALL, MPIEXEC, env=dict(bench_env, PATH=str(empty))
    )
    assert run.returncode == 2 and run.result["status"] == "not_installed"
    assert "mpiexec is not on PATH" in run.result["error"]
    assert (
        "apt-get install --no-install-recommends openmpi-bin libopenmpi3" in run.result["error"]
    ), run.result["error"]
