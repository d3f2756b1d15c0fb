"""Config problems stop before any worker starts, with one line naming what is supported."""

import shutil

import pytest


def test_unsupported_precision_names_the_supported_ones(run_bench):
    run = run_bench("framework=fake", "preset=smoke", "precision=bf16")
    assert run.returncode == 2
    assert run.result["status"] == "unsupported"
    assert run.result["error"] == (
        "precision=bf16 is not supported by framework=fake on "
        "device=cpu; supported there: fp32, int8"
    )
    assert "worker" not in run.result and "output_tail" not in run.result  # nothing started


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has a GPU")
def test_gpu_on_a_machine_without_one(run_bench):
    run = run_bench("framework=torch", "device=gpu", "preset=smoke")
    assert run.returncode == 2
    assert "device=gpu: no NVIDIA GPU found on this machine" in run.result["error"]


def test_fake_has_no_gpu_device(run_bench, bench_env):
    run = run_bench("framework=fake", "device=gpu", "preset=smoke")
    assert run.returncode == 2
    assert run.result["error"] == (
        "device=gpu is not supported by framework=fake; supported devices: cpu"
    )


def test_options_are_typed_by_the_framework_declaration(run_bench):
    """The fake framework's YAML (tests/fake_framework/fake.yaml) declares lr: 0.5: its
    schema types it, no Python per framework."""
    run = run_bench("framework=fake", "preset=smoke", "framework.options.lr=fast")
    assert run.returncode == 2 and not run.result_paths  # a composition error: nothing ran
    assert "framework.options.lr" in run.output and "could not be converted to Float" in run.output
    run = run_bench("framework=fake", "preset=smoke", "framework.options.new_switch=1")
    assert run.returncode == 2 and not run.result_paths
    assert "new_switch" in run.output


def test_option_choices_are_checked_before_the_worker(run_bench):
    run = run_bench("framework=fake", "preset=smoke", "framework.options.fault=sometimes")
    assert run.returncode == 1
    assert run.result["error"] == (
        "framework.options.fault='sometimes' is not an option value "
        "of framework=fake; choose one of 'none', 'crash', 'exit', "
        "'kill', 'hang', 'unsupported'"
    )
    assert "worker" not in run.result


def test_unknown_config_key_is_a_hydra_error(run_bench):
    run = run_bench("framework=fake", "task.epochz=2")
    assert run.returncode == 2  # a wrong command line
    assert "epochz" in run.output and not run.result_paths
