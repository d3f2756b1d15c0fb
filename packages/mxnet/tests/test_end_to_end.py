"""`python -m bench framework=gluon|mxnet ...` end to end: real workers found in the nox
environment, real results. One learning run per API style and task kind keeps this short."""
import pytest

from bench_shared import spec


@pytest.mark.parametrize("framework,task,floor", [("gluon", "cnn", 0.5), ("mxnet", "rnn", 0.7)])
def test_training_learns_the_synthetic_data(run_bench, framework, task, floor):
    code, output, result = run_bench(f"framework={framework}", f"task={task}", "preset=smoke")
    assert code == 0, output
    assert result["status"] == "ok"
    assert result["param_count"] == spec.TASKS[task].param_count
    assert result["accuracy"] > floor, result["accuracy"]  # chance: 0.1 (cnn), 0.5 (rnn)
    assert result["losses"][-1] < result["losses"][0]
    settings = result["framework"]["settings"]
    assert settings["threads"] >= 1 and settings["device"] == "cpu(0)"
    assert settings["environment"]["OMP_NUM_THREADS"] == str(settings["threads"])
    assert result["framework"]["versions"]["mxnet"]
    assert f"{framework} {task} cpu fp32 preset=smoke: train" in output


@pytest.mark.parametrize("framework", ["gluon", "mxnet"])
def test_resnet50_inference_in_bf16(run_bench, framework):
    code, output, result = run_bench(f"framework={framework}", "task=resnet50", "preset=smoke",
                                     "precision=bf16")
    assert code == 0, output
    assert result["param_count"] == spec.ResNet50.param_count
    assert result["features"]["finite"] and result["features"]["std"] > 0
    assert result["framework"]["settings"]["amp"] == "bfloat16"


@pytest.mark.parametrize("framework", ["gluon", "mxnet"])
def test_bf16_rnn_is_refused_before_a_worker_starts(run_bench, framework):
    code, output, result = run_bench(f"framework={framework}", "task=rnn", "precision=bf16")
    assert code == 2
    assert result["status"] == "unsupported" and "worker" not in result
    assert result["error"] == (f"precision=bf16 is not supported by framework={framework} for "
                               "task=rnn on device=cpu; supported there: fp32")


@pytest.mark.parametrize("framework", ["gluon", "mxnet"])
def test_fp16_on_cpu_is_refused_before_a_worker_starts(run_bench, framework):
    code, output, result = run_bench(f"framework={framework}", "task=cnn", "precision=fp16")
    assert code == 2
    assert result["status"] == "unsupported"
    assert result["error"] == (f"precision=fp16 is not supported by framework={framework} on "
                               "device=cpu; supported there: fp32, bf16")
