"""Runs whose loss became NaN or diverged are `invalid`, flagged in a sweep's summary and run
again."""

import pytest
from cli_process import FAST, strict_json


# a loss that became NaN or diverged is no result
@pytest.mark.parametrize(
    "task,lr,reason",
    [
        ("cnn", "nan", "the training loss became nan in epoch 1"),
        ("rnn", "-1e3", "the training loss diverged"),  # gradient ascent
    ],
)
def test_nan_or_diverged_loss_is_invalid(run_bench, task, lr, reason):
    run = run_bench(*FAST, f"task={task}", f"framework.options.lr={lr}")
    assert run.returncode == 1, run.output
    result = strict_json(run.result_paths[0])
    strict_json(run.result_paths[0].parent / "worker_result.json")
    assert result["status"] == "invalid"
    assert result["error"].startswith(reason), result["error"]
    assert result["stats"] == {}
    assert ": INVALID - " in run.output


def test_invalid_runs_are_flagged_in_the_summary_and_retried(run_bench):
    args = ["-m", *FAST, "task=cnn", "framework.options.lr=0.5,nan", "sweep=nan"]
    first = run_bench(*args)
    assert first.returncode == 1, first.output
    sweep_dir = first.cwd / "results" / "sweeps" / "nan"
    summary = (sweep_dir / "summary.md").read_text()
    assert "| invalid |" in summary.replace(" invalid |", "| invalid |").replace("|| ", "| ")
    rows = list((sweep_dir / "results.csv").read_text().splitlines())
    assert sum(",invalid," in row for row in rows) == 1
    again = run_bench(*args)
    assert "retrying: the stored result" in again.output and "is invalid" in again.output
    assert again.output.count("skipped, already ok") == 1
