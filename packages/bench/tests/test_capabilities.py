"""Config problems stop before any worker starts, with one line naming what is supported."""
import shutil

import pytest


def test_unsupported_precision_names_the_supported_ones(run_bench):
    run = run_bench("framework=fake", "preset=smoke", "precision=bf16")
    assert run.returncode == 2
    assert run.result["status"] == "unsupported"
    assert run.result["error"] == ("precision=bf16 is not supported by framework=fake on "
                                   "device=cpu; supported there: fp32")
    assert "worker" not in run.result and "output_tail" not in run.result  # nothing started


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has a GPU")
def test_gpu_on_a_machine_without_one(run_bench):
    run = run_bench("framework=torch", "device=gpu", "preset=smoke")
    assert run.returncode == 2
    assert "device=gpu: no NVIDIA GPU found on this machine" in run.result["error"]


def test_fake_has_no_gpu_device(run_bench, bench_env):
    run = run_bench("framework=fake", "device=gpu", "preset=smoke")
    assert run.returncode == 2
    assert run.result["error"] == ("device=gpu is not supported by framework=fake; "
                                   "supported devices: cpu")


def test_wrongly_typed_option_fails_before_the_worker(run_bench):
    run = run_bench("framework=fake", "preset=smoke", "framework.options.lr=fast")
    assert run.returncode == 1
    assert run.result["error"] == "framework.options.lr='fast' must be a float (default 0.5)"
    assert "worker" not in run.result


def test_unknown_config_key_is_a_hydra_error(run_bench):
    run = run_bench("framework=fake", "task.epochz=2")
    assert run.returncode == 1
    assert "epochz" in run.output and not run.result_paths
