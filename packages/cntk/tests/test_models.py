"""What is CNTK's own in its models: structure, running statistics, initialisers, set-up.
SPEC's counts and the equivalence with the NumPy reference are the shared conformance suite's
(shared/tests/test_conformance.py)."""

import numpy as np
import pytest
from conftest import make_run

import bench_cntk
from bench_cntk import cnn, loop, resnet50, rnn
from bench_shared import spec


def test_setup_applies_the_threads():
    settings = bench_cntk.setup(make_run("cnn", threads=1))
    assert settings["threads"] == 1 and settings["device"] == "cpu"
    settings = bench_cntk.setup(make_run("cnn"))
    assert settings["threads"] >= 1


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


def test_tensors_are_the_parameters_and_the_running_statistics():
    run = make_run("resnet50")
    bench_cntk.setup(run)
    model = resnet50.build_model(run)
    keys = bench_cntk.tensors(model).keys()
    assert sorted(keys) == sorted(v.uid for v in model.named.values())
    statistics = [v for v in model.named.values() if not v.is_parameter]
    assert {v.name for v in statistics} == {"aggregate_mean", "aggregate_variance"}
    assert len(statistics) == 2 * 53  # not the batch norms' aggregate_count


@pytest.mark.parametrize("padding,pad", [(3, True), (0, False)])
def test_spec_padding_is_cntks_same_padding_flag(padding, pad):
    assert loop.same_padding(7, padding) is pad
    with pytest.raises(ValueError, match="not CNTK's pad=True"):
        loop.same_padding(7, 2)


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


def test_dropout_layers_draw_their_own_masks():
    """Under set_fixed_random_seed (setup) CNTK gives every random op the same seed: two
    dropout ops of one shape draw the same mask. The CNN's three layers get a seed each."""
    C = bench_cntk.cntk_module()
    run = make_run("cnn")
    bench_cntk.setup(run)
    x = C.input_variable(2000, needs_gradient=True)
    ones = np.ones((1, 2000), np.float32)

    def masks(a, b):  # kept elements of a and b, through one gradient of a + 10 b
        grad = np.asarray(C.reduce_sum(a + 10.0 * b).grad({x: ones}, wrt=[x])).ravel()
        return (np.round(grad) % 10) != 0, grad >= 10

    first, second = masks(C.dropout(x, 0.5), C.dropout(x, 0.5))
    assert np.array_equal(first, second)  # CNTK's default: one seed for all
    first, second = masks(C.dropout(x, 0.5, seed=0), C.dropout(x, 0.5, seed=1))
    assert not np.array_equal(first, second) and 0.15 < (first & second).mean() < 0.35
    net = cnn.build_model(run).net
    dropouts = C.logging.graph.depth_first_search(
        net,
        lambda f: isinstance(f, C.Function) and f.attributes.get("rngSeed") is not None,
        depth=-1,
    )
    assert len({f.attributes["rngSeed"] for f in dropouts}) == 3
