"""Neutral weights in PyTorch: the NumPy reference is checked against PyTorch with copied
weights (so it cannot be silently wrong), and a wrong conversion must fail `bench verify`."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import bench
from bench import testing
from bench_shared import reference, reference_train, weights
from bench_torch import cnn, resnet50, rnn

MODULES = {"cnn": cnn, "resnet50": resnet50, "rnn": rnn}


def loaded_model(task, *overrides):
    return testing.loaded_model("torch", task, *overrides)


@pytest.mark.parametrize("task", sorted(MODULES))
def test_reference_forward_equals_pytorch(task):
    _, model, params = loaded_model(task)
    inputs = reference.fixed_inputs(task)
    out = MODULES[task].predict(model, [inputs])
    assert reference.relative_error(out, reference.forward(task, params, inputs)) < 1e-5


@pytest.mark.parametrize("task", sorted(MODULES))
def test_export_returns_the_loaded_weights(task):
    _, model, params = loaded_model(task)
    exported = MODULES[task].export_weights(model)
    assert list(exported) == list(params)
    assert all(np.array_equal(exported[k], params[k]) for k in params)


@pytest.mark.parametrize("task", ["cnn", "rnn"])
def test_reference_training_equals_pytorch(task):
    run, model, params = loaded_model(task)
    batches = reference_train.fixed_batches(task, 8, batch_size=8)
    expected = reference_train.train_steps(task, params, batches, run["task"]["optimizer"])
    losses = [MODULES[task].train_epoch(model, [b]) for b in batches]
    np.testing.assert_allclose(losses, expected, rtol=1e-4)
    assert losses[-1] != losses[0]  # it did train


def test_a_transposed_kernel_changes_the_output():
    _, model, params = loaded_model("cnn")
    params["conv1.weight"] = params["conv1.weight"].transpose(0, 1, 3, 2).copy()
    cnn.load_weights(model, params)
    inputs = reference.fixed_inputs("cnn")
    expected = reference.forward("cnn", weights.random_weights("cnn"), inputs)
    error = reference.relative_error(cnn.predict(model, [inputs]), expected)
    assert error > 1e-2


def test_verify_matrix_end_to_end_catches_a_wrong_conversion(tmp_path):
    here = Path(__file__).parent / "wrong_conversion"
    conf = tmp_path / "conf"
    shutil.copytree(bench.conf_dir(), conf)
    shutil.copy(here / "torch_wrong.yaml", conf / "framework" / "torch_wrong.yaml")
    env = dict(os.environ, BENCH_CONF_DIR=str(conf),
               PYTHONPATH=os.pathsep.join(filter(None, [str(here), os.environ.get("PYTHONPATH")])))
    out = subprocess.run([sys.executable, "-m", "bench", "verify", "--frameworks",
                          "torch,torch_wrong", "--tasks", "cnn,rnn", "--steps", "5",
                          "--out", str(tmp_path / "verify")],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert out.returncode == 1, out.stdout + out.stderr
    rows = {line.split()[0]: line for line in out.stdout.splitlines()
            if line.split()[1:2] in (["pass"], ["FAIL"])}  # the matrix, not the progress lines
    torch_row, wrong_row = rows["torch"], rows["torch_wrong"]
    assert torch_row.count("pass") == 2 and "FAIL" not in torch_row
    assert wrong_row.split()[1] == "FAIL" and "pass" in wrong_row  # cnn fails, rnn passes
    assert "torch_wrong cnn: FAIL - output error" in out.stdout
    report = json.loads((tmp_path / "verify" / "verify.json").read_text())
    assert {(c["framework"], c["task"], c["status"]) for c in report} == {
        ("torch", "cnn", "pass"), ("torch", "rnn", "pass"),
        ("torch_wrong", "cnn", "FAIL"), ("torch_wrong", "rnn", "pass")}
