"""SIGTERM and SIGKILL of the orchestrator, through `python -m bench` in subprocesses: the run is
recorded, its workers killed, a second SIGTERM (Slurm sends two) still ends it cleanly."""

import contextlib
import os
import re
import signal
import time

from cli_process import (
    FAST,
    children,
    gone,
    linux_only,
    read_until,
    start,
    strict_json,
    watch_exit,
)


# SIGTERM like Ctrl-C; a worker dies with its orchestrator
def start_hanging_worker(bench_env, tmp_path):
    """A run whose fake worker hangs: (orchestrator process, worker pid, output so far)."""
    proc = start([*FAST, "task=cnn", "framework.options.fault=hang"], bench_env, tmp_path)
    lines = []
    assert read_until(proc, "fake: hanging", lines), "".join(lines)
    (worker,) = children(proc.pid)
    return proc, worker, lines


@linux_only
def test_sigterm_records_the_run_and_kills_the_worker(bench_env, tmp_path):
    proc, worker, lines = start_hanging_worker(bench_env, tmp_path)
    proc.send_signal(signal.SIGTERM)
    output = "".join(lines) + proc.communicate(timeout=60)[0]
    assert proc.returncode == 143, output
    assert gone(worker)
    path = re.search(r"^result: (.+)$", output, re.M).group(1)
    result = strict_json(path)
    assert result["status"] == "interrupted" and result["interrupted"] == "SIGTERM"
    assert result["error"] == "interrupted (SIGTERM); the worker was killed"
    assert "interrupted (SIGTERM): finished results are kept" in output


@linux_only
def test_two_sigterms_15_ms_apart_still_record_the_interrupted_ranks(bench_env, tmp_path):
    """Slurm's time limit: SIGTERM twice, ~10 ms apart; the second lands in the cleanup the
    first began, which must still kill every rank and write a result naming them."""
    proc = start(
        [
            "framework=fake",
            "devices=2",
            "task=densenet",
            "preset=smoke",
            "task.image_size=32",
            "task.batch_size=16",
            "preset.train_examples=512",
            "preset.test_examples=256",
            "framework.options.fault=hang",
            "preset.timeout_s=300",
        ],
        bench_env,
        tmp_path,
    )
    lines = []
    assert read_until(proc, "fake: hanging", lines), "".join(lines)
    ranks = children(proc.pid)
    assert len(ranks) == 2, ranks
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.015)
    proc.send_signal(signal.SIGTERM)
    output = "".join(lines) + proc.communicate(timeout=120)[0]
    assert proc.returncode == 143, output
    assert all(gone(pid) for pid in ranks)
    result = strict_json(re.search(r"^result: (.+)$", output, re.M).group(1))
    assert result["error"].startswith("interrupted (SIGTERM); the workers were killed"), output
    assert result["status"] == "interrupted" and result["interrupted"] == "SIGTERM"
    assert [r["rank"] for r in result["ranks"]] == [0, 1]
    assert all(r["exit_code"] == -signal.SIGKILL for r in result["ranks"]), result["ranks"]


@linux_only
def test_sigkill_of_the_orchestrator_takes_the_worker_with_it(bench_env, tmp_path):
    """The kernel sends the worker SIGKILL as its orchestrator dies (PR_SET_PDEATHSIG, asked
    by the worker: bench_shared.lifeline). On a machine at load 4 a worker was seen alive 10 s
    after its orchestrator: the test tells a signal never sent (a leak) from one sent and not
    yet acted on (SIGKILL pending while the loaded kernel schedules the exit), waits up to a
    minute for the latter, and says what it saw either way."""
    proc, worker, lines = start_hanging_worker(bench_env, tmp_path)
    proc.kill()
    proc.wait(timeout=30)
    seen = watch_exit(worker, within_s=60)
    try:
        assert seen.gone, f"worker {worker} outlived its orchestrator: {seen.text()}"
        assert seen.seconds < 10 or seen.sigkill_pending, (
            f"worker {worker} ran on without a SIGKILL sent: {seen.text()}"
        )
    finally:
        if not seen.gone:
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker, signal.SIGKILL)
