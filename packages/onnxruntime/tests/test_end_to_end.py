"""`python -m bench framework=onnxruntime ...` end to end, what is ONNX Runtime's own: the
training tasks refused before any worker starts, saying why, and the session options as
recorded. ResNet-50 inference at the smoke preset and SPEC's counts are the shared end-to-end
suite's (packages/bench/tests_frameworks)."""

import pytest


@pytest.mark.parametrize("task", ["cnn", "rnn"])
def test_training_tasks_are_refused_saying_it_is_an_inference_runtime(run_bench, task):
    code, output, result = run_bench("framework=onnxruntime", f"task={task}", "preset=smoke")
    assert code == 2, output
    assert result["status"] == "unsupported" and "worker" not in result
    assert result["error"] == (
        f"task={task} is not supported by framework=onnxruntime (an inference runtime: it runs "
        "a trained graph and has no training API); supported tasks: resnet50"
    )


def test_optimisation_level_and_threads_are_applied_and_recorded(run_bench):
    code, output, result = run_bench(
        "framework=onnxruntime",
        "task=resnet50",
        "preset=smoke",
        "preset.inference_batches=1",
        "task.batch_size=2",
        "framework.options.graph_optimization=disable",
        "framework.options.threads=1",
    )
    assert code == 0, output
    settings = result["framework"]["settings"]
    assert settings["graph_optimization_level"] == "ORT_DISABLE_ALL"
    assert (settings["threads"], settings["interop_threads"]) == (1, 1)
    assert settings["providers"] == ["CPUExecutionProvider"]
    assert result["framework"]["versions"]["onnxruntime"]
    assert result["images"] == 2 and result["features"]["finite"]


def test_an_unknown_optimisation_level_is_refused_before_the_worker(run_bench):
    code, output, result = run_bench(
        "framework=onnxruntime",
        "task=resnet50",
        "preset=smoke",
        "framework.options.graph_optimization=max",
    )
    assert code == 1 and "worker" not in result
    assert "choose one of 'disable', 'basic', 'extended', 'layout', 'all'" in result["error"]
