"""`python -m bench framework=chainer ...` end to end: a real Chainer worker, real results;
and framework=chainer_ideep, whose Python 3.7 worker runs in the environment `nox -s
chainer_ideep` builds (the default `nox` run builds it before this session)."""
import json
import subprocess
import sys

import pytest

from bench import environments
from bench_shared import spec

IDEEP_BUILT = environments.nox_python("chainer_ideep").exists()

# The CNN's learning check runs where it takes seconds: in the iDeep worker when that is built
# (the same bench_chainer code), else on NumPy (~5 min here). On NumPy the CNN then runs one
# short epoch end to end; its training maths is checked step by step by test_models and verify.
CNN_LEARNER = "chainer_ideep" if IDEEP_BUILT else "chainer"


@pytest.mark.parametrize("framework,task,floor", [("chainer", "rnn", 0.65),
                                                  (CNN_LEARNER, "cnn", 0.5)])
def test_training_learns_the_synthetic_data(run_bench, framework, task, floor):
    code, output, result = run_bench(f"framework={framework}", f"task={task}", "preset=smoke")
    assert code == 0, output
    assert result["status"] == "ok"
    assert result["param_count"] == spec.TASKS[task].param_count
    assert result["accuracy"] > floor, result["accuracy"]  # chance: 0.1 (cnn), 0.5 (rnn)
    assert result["losses"][-1] < result["losses"][0]
    settings = result["framework"]["settings"]
    assert settings["threads"] >= 1 and settings["device"] == "@numpy"
    assert settings["type_check"] is False
    assert settings["use_ideep"] == ("auto" if framework == "chainer_ideep" else "never")
    assert result["framework"]["versions"]["chainer"] == "7.8.1"
    assert result["worker"]["found_by"].startswith(("nox session", "current interpreter"))
    assert f"{framework} {task} cpu fp32 preset=smoke: train" in output
    if framework == "chainer_ideep":
        assert result["python"].startswith("3.7.")
        assert result["worker"]["found_by"] == "nox session chainer_ideep"
        assert result["framework"]["versions"]["ideep"]


@pytest.mark.skipif(not IDEEP_BUILT, reason="the NumPy CNN learns in test_training_learns...")
def test_numpy_cnn_runs_end_to_end(run_bench):
    code, output, result = run_bench("framework=chainer", "task=cnn", "preset=smoke",
                                     "preset.epochs=1", "preset.train_examples=256",
                                     "preset.test_examples=128")
    assert code == 0, output
    assert result["param_count"] == spec.CNN.param_count
    assert result["framework"]["settings"]["use_ideep"] == "never"
    assert all(loss > 0 for loss in result["losses"]) and result["accuracy"] >= 0


def test_frozen_model_stays_at_chance(run_bench):
    # one step at lr 0 (Chainer's GRU on NumPy is slow): the model must stay at chance
    code, output, result = run_bench("framework=chainer", "task=rnn", "preset=smoke",
                                     "task.optimizer.lr=0.0", "preset.epochs=1",
                                     "preset.train_examples=64", "preset.test_examples=256")
    assert code == 0, output
    assert 0.4 < result["accuracy"] < 0.6


def test_resnet50_inference(run_bench):
    # batches of 8: NumPy's im2col convolutions take ~0.5 s per image here
    code, output, result = run_bench("framework=chainer", "task=resnet50", "preset=smoke",
                                     "task.batch_size=8")
    assert code == 0, output
    assert result["param_count"] == spec.ResNet50.param_count
    assert result["features"]["finite"]
    assert result["stats"]["seconds_per_1000_images"] > 0


def test_fp16_on_cpu_is_refused_before_a_worker_starts(run_bench):
    code, output, result = run_bench("framework=chainer", "task=cnn", "precision=fp16")
    assert code == 2
    assert result["status"] == "unsupported"
    assert result["error"] == ("precision=fp16 is not supported by framework=chainer on "
                               "device=cpu; supported there: fp32")


def test_verify_passes(tmp_path):
    """`python -m bench verify`: the Rosetta check through real workers (with iDeep too, when
    its environment is built: the references are computed once for both)."""
    frameworks = ["chainer"] + (["chainer_ideep"] if IDEEP_BUILT else [])
    out = subprocess.run([sys.executable, "-m", "bench", "verify", "--frameworks",
                          ",".join(frameworks), "--steps", "3", "--out", str(tmp_path)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads((tmp_path / "verify.json").read_text())
    assert {(c["framework"], c["task"], c["status"]) for c in report} == {
        (fw, task, "pass") for fw in frameworks for task in ("cnn", "resnet50", "rnn")}
