"""What is Chainer's own in its models: link structure, initialisers, the GRU's per-gate
matrices, mixed16, the options and the GPU and iDeep refusals. SPEC's counts and the
equivalence with the NumPy reference are the shared conformance suite's
(shared/tests/test_conformance.py)."""

import chainer
import numpy as np
import pytest
from chainer.backends import intel64
from conftest import make_run

import bench_chainer
from bench import testing
from bench.run import capabilities
from bench_chainer import cnn, resnet50, rnn
from bench_shared import spec


def test_resnet50_is_v1_with_spec_stem_and_batch_norm():
    net = resnet50.ResNet50Features()
    block = net.res3.a
    assert block.conv1.stride == (2, 2) and block.conv2.stride == (1, 1)  # stride on the 1x1
    assert net.conv1.b is None  # no stem bias (L.ResNet50Layers has one)
    norms = [link for link in net.links() if isinstance(link, chainer.links.BatchNormalization)]
    assert len(norms) == 53 and {n.eps for n in norms} == {spec.ResNet50.batch_norm_eps}
    buffers = sum(n.avg_mean.size + n.avg_var.size for n in norms)
    assert buffers == spec.ResNet50.buffer_count


def test_gru_has_two_bias_vectors_per_gate_and_keras_initialisers():
    net = rnn.GRUClassifier()
    layer = net.gru[0]
    names = sorted(name for name, _ in layer.namedparams())
    assert names == ["/b%d" % i for i in range(6)] + ["/w%d" % i for i in range(6)]
    assert all(getattr(layer, "b%d" % i).array.shape == (100,) for i in range(6))
    w3 = layer.w3.array
    np.testing.assert_allclose(w3 @ w3.T, np.eye(100), atol=1e-5)  # orthogonal, scale 1
    assert np.abs(net.embedding.W.array).max() <= spec.RNN.embedding_init_range


def test_neutral_gru_matrices_land_gate_by_gate_transposed():
    _, model, params = testing.loaded_model("chainer", "rnn")
    layer, units = model.net.gru[0], spec.RNN.hidden_units
    for g in range(3):
        gate = slice(g * units, (g + 1) * units)
        np.testing.assert_array_equal(
            getattr(layer, "w%d" % g).array, params["gru.input_weight"][:, gate].T
        )
        np.testing.assert_array_equal(
            getattr(layer, "w%d" % (g + 3)).array, params["gru.recurrent_weight"][:, gate].T
        )
        np.testing.assert_array_equal(
            getattr(layer, "b%d" % g).array, params["gru.input_bias"][gate]
        )
        np.testing.assert_array_equal(
            getattr(layer, "b%d" % (g + 3)).array, params["gru.recurrent_bias"][gate]
        )


def test_tensors_are_the_parameters_and_the_running_statistics():
    run = make_run("task=resnet50")
    bench_chainer.setup(run)
    model = resnet50.build_model(run)
    keys = bench_chainer.tensors(model).keys()
    statistics = [k for k in keys if k.endswith(("/avg_mean", "/avg_var"))]
    assert len(statistics) == 2 * 53 and "/res3/a/bn4/avg_var" in statistics
    assert sorted(set(keys) - set(statistics)) == sorted(p for p, _ in model.net.namedparams())


def test_cnn_initialisers_and_dropout_off_at_evaluation():
    run = make_run("task=cnn")
    bench_chainer.setup(run)
    model = cnn.build_model(run)
    assert model.net.dropout == spec.CNN.dropout
    assert all((link.b.array == 0).all() for link in model.net.children())
    limit = np.sqrt(6 / (3 * 9 + 50 * 9))  # glorot-uniform, fan over the receptive field
    w = np.abs(model.net.conv1.W.array)
    assert w.max() <= limit and w.max() > 0.9 * limit
    x = np.random.RandomState(0).rand(8, 3, 32, 32).astype(np.float32)
    assert np.array_equal(cnn.predict(model, [x]), cnn.predict(model, [x]))  # no dropout
    with chainer.using_config("train", True):  # ... which is on in training mode
        a, b = (model.net(x).array for _ in range(2))
    assert not np.array_equal(a, b)


def test_setup_applies_and_records_the_options():
    run = make_run("task=cnn", "framework.options.threads=1", "framework.options.type_check=true")
    settings = bench_chainer.setup(run)
    assert settings["threads"] == 1 and settings["type_check"] is True
    assert chainer.config.type_check is True
    settings = bench_chainer.setup(make_run("task=cnn"))
    assert settings["type_check"] is False and settings["autotune"] is True
    assert settings["threads"] >= 1 and settings["dtype"] == "float32"
    assert settings["device"] == "@numpy"


def test_ideep_is_a_named_variant_never_a_silent_default():
    assert capabilities.declared("chainer")["options"]["use_ideep"] == "never"
    assert capabilities.declared("chainer_ideep")["options"]["use_ideep"] == "auto"


@pytest.mark.skipif(intel64.is_ideep_available(), reason="ideep4py is installed here")
def test_ideep_without_ideep4py_is_a_clear_error():
    run = make_run("task=cnn", "framework.options.use_ideep=auto")
    with pytest.raises(ValueError, match="needs ideep4py"):
        bench_chainer.setup(run)


@pytest.mark.skipif(chainer.backends.cuda.available, reason="this machine has CuPy and a GPU")
def test_gpu_without_cupy_is_unsupported():
    run = make_run("task=cnn")
    run["device"]["name"] = "gpu"
    with pytest.raises(NotImplementedError, match="device=gpu is not supported by chainer"):
        bench_chainer.setup(run)


def test_mixed16_code_path_runs():
    """fp16 is declared for GPUs only (NumPy's float16 is slow), but its code path - float16
    links, float32 batch norm and master weights, loss scaling - is the same on NumPy."""
    run = make_run("task=cnn", "precision=fp16")
    try:
        bench_chainer.setup(run)
        model = cnn.build_model(run)
        assert model.net.conv1.W.dtype == np.float16 and model.input_dtype == np.float16
        x = np.random.RandomState(0).rand(2, 3, 32, 32).astype(np.float32)
        loss = cnn.train_epoch(model, [(x, np.arange(2))])
        assert np.isfinite(loss) and model.optimizer._loss_scaling_is_dynamic
        assert np.isfinite(cnn.predict(model, [x])).all()
    finally:
        bench_chainer.setup(make_run("task=cnn"))  # back to float32 for the other tests
