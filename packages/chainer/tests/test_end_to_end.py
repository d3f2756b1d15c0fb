"""`python -m bench framework=chainer|chainer_ideep ...` end to end, what is Chainer's own: the
iDeep variant is a Python 3.7 worker from `nox -s chainer_ideep` that says so, and the NumPy
backend records its switches. Learning, ResNet-50 and SPEC's counts for both are the shared
end-to-end suite's (packages/bench/tests_frameworks; the chainer session runs it for both)."""

import pytest

from bench.run import environments

IDEEP_BUILT = environments.nox_python("chainer_ideep").exists()
SMALL = ("preset=smoke", "preset.epochs=1", "preset.train_examples=256", "preset.test_examples=128")


def test_numpy_backend_records_its_switches(run_bench):
    code, output, result = run_bench("framework=chainer", "task=cnn", *SMALL)
    assert code == 0, output
    settings = result["framework"]["settings"]
    assert settings["threads"] >= 1 and settings["device"] == "@numpy"
    assert settings["type_check"] is False and settings["use_ideep"] == "never"
    assert result["framework"]["versions"]["chainer"] == "7.8.1"


@pytest.mark.skipif(
    not IDEEP_BUILT,
    reason="no .nox/chainer_ideep: `nox -s chainer_ideep` builds it (Python 3.7 from pyenv)",
)
def test_ideep_variant_runs_in_its_python37_environment(run_bench):
    code, output, result = run_bench("framework=chainer_ideep", "task=cnn", *SMALL)
    assert code == 0, output
    assert result["python"].startswith("3.7.")
    assert result["worker"]["found_by"] == "nox session chainer_ideep"
    assert result["framework"]["versions"]["ideep"]
    assert result["framework"]["settings"]["use_ideep"] == "auto"


def test_frozen_model_stays_at_chance(run_bench):
    # one step at lr 0 (Chainer's GRU on NumPy is slow): the model must stay at chance
    code, output, result = run_bench(
        "framework=chainer",
        "task=rnn",
        "preset=smoke",
        "task.optimizer.lr=0.0",
        "preset.epochs=1",
        "preset.train_examples=64",
        "preset.test_examples=256",
    )
    assert code == 0, output
    assert 0.4 < result["accuracy"] < 0.6
