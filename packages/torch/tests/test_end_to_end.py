"""`python -m bench framework=torch ...` end to end: a real torch worker, real results."""
import pytest

from bench_shared import spec


@pytest.mark.parametrize("task,chance,floor", [("cnn", 0.1, 0.5), ("rnn", 0.5, 0.7)])
def test_training_learns_the_synthetic_data(run_bench, task, chance, floor):
    code, output, result = run_bench("framework=torch", f"task={task}", "preset=smoke")
    assert code == 0, output
    assert result["status"] == "ok"
    assert result["param_count"] == spec.TASKS[task].param_count
    assert result["accuracy"] > floor, result["accuracy"]  # far above chance
    assert result["losses"][-1] < result["losses"][0]
    settings = result["framework"]["settings"]
    assert settings["threads"] >= 1 and settings["device"] == "cpu"
    assert {"channels_last", "compile", "cudnn_benchmark", "tf32"} <= set(settings)
    assert result["framework"]["versions"]["torch"]
    assert result["stats"]["examples_per_second"] > 0
    assert 0 < result["stats"]["utilisation"] < 1.5 and result["peak_flops"] > 1e9
    assert f"torch {task} cpu fp32 preset=smoke: train" in output


def test_frozen_model_stays_at_chance(run_bench):
    code, output, result = run_bench("framework=torch", "task=rnn", "preset=smoke",
                                     "task.optimizer.lr=0.0", "preset.epochs=1")
    assert code == 0, output
    assert 0.4 < result["accuracy"] < 0.6


def test_resnet50_inference(run_bench):
    code, output, result = run_bench("framework=torch", "task=resnet50", "preset=smoke")
    assert code == 0, output
    assert result["param_count"] == spec.ResNet50.param_count
    assert result["features"]["finite"]
    assert result["stats"]["seconds_per_1000_images"] > 0
    assert "s per 1000 images" in output


def test_bf16_runs_on_cpu(run_bench):
    code, output, result = run_bench("framework=torch", "task=rnn", "preset=smoke",
                                     "precision=bf16", "preset.epochs=1")
    assert code == 0, output
    assert result["config"]["precision"]["name"] == "bf16"


def test_fp16_on_cpu_is_refused_before_a_worker_starts(run_bench):
    code, output, result = run_bench("framework=torch", "task=cnn", "precision=fp16")
    assert code == 2
    assert result["status"] == "unsupported"
    assert result["error"] == ("precision=fp16 is not supported by framework=torch on "
                               "device=cpu; supported there: fp32, bf16")
