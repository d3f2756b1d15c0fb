"""Sizes checked before a worker starts: a zero or negative count, epoch, batch or timeout is one
line naming the option."""

import pytest
from cli_process import FAST, strict_json


# sizes checked before a worker starts
@pytest.mark.parametrize(
    "override,message",
    [
        ("preset.epochs=0", "preset.epochs=0: must be 1 or more (null keeps the task's value)"),
        ("preset.train_examples=0", "preset.train_examples=0: must be 1 or more"),
        ("preset.test_examples=-5", "preset.test_examples=-5: must be 1 or more"),
        ("task.batch_size=0", "task.batch_size=0: must be 1 or more"),
        ("task.epochs=-1", "task.epochs=-1: must be 1 or more"),
        ("preset.timeout_s=0", "preset.timeout_s=0.0: must be more than 0 seconds"),
        ("seed=-1", "seed=-1: must be 0 to 4294967295"),
        ("seed=4294967296", "seed=4294967296: must be 0 to 4294967295"),
        (
            "preset.train_examples=10",
            "10 training examples make no complete batch of "
            "task.batch_size=64: raise preset.train_examples (now 10) or lower task.batch_size",
        ),
    ],
)
def test_bad_sizes_are_refused_before_a_worker_starts(run_bench, override, message):
    run = run_bench(*FAST, "task=cnn", override)
    assert run.returncode == 1, run.output
    assert "Traceback" not in run.output, run.output
    result = strict_json(run.result_paths[0])
    assert result["status"] == "failed" and result["error"].startswith(message)
    assert not (run.result_paths[0].parent / "run.json").exists()  # no worker started


def test_bad_inference_sizes_are_refused(run_bench):
    run = run_bench(*FAST, "task=resnet50", "preset.inference_batches=0")
    assert run.returncode == 1, run.output
    assert run.result["error"].startswith("preset.inference_batches=0: must be 1 or more")
