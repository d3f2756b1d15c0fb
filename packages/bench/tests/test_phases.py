"""Where a run's time goes (bench.run.phases), through the CLI on real runs of the numpy
stand-in: the phases are named alike and add up to the run's wall time; a run that failed
half-way records as far as it got, with no zero for a phase that never ran; a sweep's summary
and the report say what share went to timed windows and each framework's largest fixed
costs; results from before phases still read."""

import json
import subprocess
import sys
import time

from cli_process import FAST

CNN = [*FAST, "task=cnn"]
ORCHESTRATOR = {"start", "checks", "prepare", "canary", "record"}
WORKER = {"interpreter", "framework_import", "task_import", "data_load", "timed", "worker_other"}


def test_a_run_says_where_its_time_went(bench_env, tmp_path):
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "bench", *CNN, f"hydra.run.dir={tmp_path / 'run'}"],
        env=bench_env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    wall = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    phases = result["phases"]
    assert ORCHESTRATOR | WORKER <= set(phases), phases
    assert all(isinstance(v, float) and v >= 0 for v in phases.values()), phases
    assert abs(phases["timed"] - sum(result["timings"]["epoch"])) < 1e-3
    # the phases are the run's wall time: the process measured from outside, less its exit
    assert 0.7 * wall <= sum(phases.values()) <= 1.05 * wall, (sum(phases.values()), wall)


def test_a_failed_run_records_its_phases_as_far_as_it_got(run_bench):
    run = run_bench(*CNN, "framework.options.fault=crash")
    assert run.returncode == 1, run.output
    phases = run.result["phases"]
    assert {"start", "checks", "prepare", "interpreter"} <= set(phases), phases
    assert "timed" not in phases and "evaluation" not in phases, phases
    refused = run_bench(*FAST, "task=cnn", "precision=fp16")
    assert refused.result["status"] == "unsupported", refused.output
    assert set(refused.result["phases"]) == {"start"}, refused.result["phases"]


def test_a_sweep_and_its_report_say_where_the_time_went(run_bench, tmp_path):
    sweep = run_bench("-m", *FAST, "task=cnn,rnn", "sweep=costs")
    assert sweep.returncode == 0, sweep.output
    assert "Where the runs' time went: " in sweep.output, sweep.output
    report = run_bench(
        "report",
        str(tmp_path / "results/sweeps/costs"),
        "--out",
        str(tmp_path / "r"),
        "--no-charts",
    )
    text = (tmp_path / "r" / "report.md").read_text()
    line = next(x for x in text.splitlines() if x.startswith("| Fake (numpy) | 2 |"))
    assert " s (" in line, line  # a fixed cost and its share of the run
    # results from before phases were recorded still read, and are left out of the section
    for path in (tmp_path / "results/sweeps/costs").rglob("result.json"):
        result = json.loads(path.read_text())
        result.pop("phases")
        path.write_text(json.dumps(result))
    report = run_bench(
        "report",
        str(tmp_path / "results/sweeps/costs"),
        "--out",
        str(tmp_path / "q"),
        "--no-charts",
    )
    assert report.returncode == 0, report.output
    assert "Where the runs' time went" not in (tmp_path / "q" / "report.md").read_text()
