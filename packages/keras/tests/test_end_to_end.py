"""`python -m bench framework=keras ...` end to end, real worker, real results."""
import pytest

from bench_shared import spec


@pytest.mark.parametrize("task,floor", [("cnn", 0.5), ("rnn", 0.65)])
def test_training_learns_the_synthetic_data(run_bench, task, floor):
    code, output, result = run_bench("framework=keras", f"task={task}", "preset=smoke")
    assert code == 0, output
    assert result["param_count"] == spec.TASKS[task].param_count
    assert result["accuracy"] > floor, result["accuracy"]  # chance: 0.1 (cnn), 0.5 (rnn)
    settings = result["framework"]["settings"]
    # XLA: on for the GRU (conf/task_framework/rnn_keras.yaml), off for the CNN
    assert settings["backend"] == "tensorflow" and settings["jit_compile"] is (task == "rnn")
    assert result["host"]["environment_variables"]["KERAS_BACKEND"] == "tensorflow"


def test_resnet50_application(run_bench):
    code, output, result = run_bench("framework=keras", "task=resnet50", "preset=smoke")
    assert code == 0, output
    assert result["param_count"] == spec.ResNet50.param_count
    assert result["features"]["finite"]


def test_fp16_on_cpu_is_refused(run_bench):
    code, output, result = run_bench("framework=keras", "task=cnn", "precision=fp16")
    assert code == 2 and "supported there: fp32, bf16" in result["error"]
