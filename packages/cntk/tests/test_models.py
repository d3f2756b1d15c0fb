"""The CNTK models against SPEC: parameter counts, shapes, layouts, initialisers, set-up."""
import numpy as np
import pytest
from conftest import make_run

import bench_cntk
from bench_cntk import cnn, resnet50, rnn
from bench_shared import spec

MODULES = {"cnn": cnn, "resnet50": resnet50, "rnn": rnn}


@pytest.mark.parametrize("task", sorted(MODULES))
def test_parameter_count_equals_spec(task):
    run = make_run(task)
    settings = bench_cntk.setup(run)
    assert settings["threads"] >= 1 and settings["device"] == "cpu"
    model = MODULES[task].build_model(run)
    assert bench_cntk.count_parameters(model) == spec.TASKS[task].param_count


def test_resnet50_running_statistics_and_features():
    run = make_run("resnet50")
    bench_cntk.setup(run)
    model = resnet50.build_model(run)
    buffers = sum(v.value.size for n, v in model.named.items() if n.endswith((".mean", ".var")))
    assert buffers == spec.ResNet50.buffer_count
    x = np.random.RandomState(0).randn(2, 3, 224, 224).astype(np.float32)
    features = resnet50.predict(model, [x])
    assert features.shape == (2, 2048) and features.dtype == np.float32
    assert np.isfinite(features).all() and (features >= 0).all()  # after a ReLU and the pool


def test_gru_is_the_cudnn_form_with_two_bias_vectors():
    run = make_run("rnn")
    bench_cntk.setup(run)
    model = rnn.build_model(run)
    assert model.named["gru.input_bias"].shape == model.named["gru.recurrent_bias"].shape == (300,)
    assert rnn.GRU_IMPLEMENTATION == "fold"


def test_cnn_initialisers_and_dropout_off_at_evaluation():
    run = make_run("cnn")
    bench_cntk.setup(run)
    model = cnn.build_model(run)
    for name, variable in model.named.items():
        if name.endswith(".bias"):
            assert (variable.value == 0).all(), name
    limit = np.sqrt(6 / (3 * 9 + 50 * 9))  # glorot-uniform, fan over the receptive field
    w = np.abs(model.named["conv1.weight"].value)
    assert w.max() <= limit and w.max() > 0.9 * limit
    x = np.random.RandomState(0).rand(8, 3, 32, 32).astype(np.float32)
    a, b = cnn.predict(model, [x]), cnn.predict(model, [x])
    assert np.array_equal(a, b)  # eval(): dropout off, deterministic


def test_unknown_option_is_rejected_by_setup():
    run = make_run("cnn", xla=True)
    with pytest.raises(ValueError, match="unknown cntk options"):
        bench_cntk.setup(run)


@pytest.mark.parametrize("field,value,message", [
    ("device", {"name": "gpu", "index": 0}, "device=gpu is not supported by cntk"),
    ("precision", "fp16", "precision=fp16 is not supported by cntk")])
def test_gpu_and_fp16_are_unsupported(field, value, message):
    run = make_run("cnn")
    run[field] = value
    with pytest.raises(NotImplementedError, match=message):
        bench_cntk.setup(run)
