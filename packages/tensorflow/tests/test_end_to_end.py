"""`python -m bench framework=tensorflow ...` end to end, real worker, real results."""
import pytest

from bench_shared import spec


@pytest.mark.parametrize("task,floor", [("cnn", 0.5), ("rnn", 0.65)])
def test_training_learns_the_synthetic_data(run_bench, task, floor):
    code, output, result = run_bench("framework=tensorflow", f"task={task}", "preset=smoke")
    assert code == 0, output
    assert result["param_count"] == spec.TASKS[task].param_count
    assert result["accuracy"] > floor, result["accuracy"]  # chance: 0.1 (cnn), 0.5 (rnn)
    settings = result["framework"]["settings"]
    # XLA: on for the GRU (conf/task_framework/rnn_tensorflow.yaml), off for the CNN
    assert settings["policy"] == "float32" and settings["xla"] is (task == "rnn")
    assert settings["threads"] >= 1
    assert result["framework"]["versions"]["tensorflow"]


def test_resnet50_and_native_pipeline(run_bench):
    code, output, result = run_bench("framework=tensorflow", "task=resnet50", "preset=smoke")
    assert code == 0, output
    assert result["param_count"] == spec.ResNet50.param_count
    assert result["features"]["finite"]
    code, output, result = run_bench("framework=tensorflow", "task=cnn", "preset=smoke",
                                     "preset.epochs=1", "framework.options.native_pipeline=true")
    assert code == 0, output
    assert result["framework"]["settings"]["native_pipeline"] is True


def test_bf16_policy(run_bench):
    code, output, result = run_bench("framework=tensorflow", "task=rnn", "preset=smoke",
                                     "precision=bf16", "preset.epochs=1")
    assert code == 0, output
    assert result["framework"]["settings"]["policy"] == "mixed_bfloat16"
