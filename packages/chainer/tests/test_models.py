"""The Chainer models against SPEC and the NumPy reference, with neutral weights."""
import chainer
import numpy as np
import pytest
from chainer.backends import intel64
from conftest import make_run

import bench_chainer
from bench import testing
from bench_chainer import cnn, resnet50, rnn
from bench_shared import reference, reference_train, spec

MODULES = {"cnn": cnn, "resnet50": resnet50, "rnn": rnn}


def loaded_model(task, *overrides):
    return testing.loaded_model("chainer", task, *overrides)


@pytest.mark.parametrize("task", sorted(MODULES))
def test_parameter_count_and_reference_forward(task):
    _, model, params = loaded_model(task)
    assert bench_chainer.count_parameters(model) == spec.TASKS[task].param_count
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
def test_training_steps_follow_the_reference(task):
    run, model, params = loaded_model(task)
    batches = reference_train.fixed_batches(task, 6, batch_size=8)
    expected = reference_train.train_steps(task, params, batches, run["task"]["optimizer"])
    losses = [MODULES[task].train_epoch(model, [b]) for b in batches]
    np.testing.assert_allclose(losses, expected, rtol=1e-4)
    assert losses[-1] != losses[0]  # it did train


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
    assert np.abs(net.embedding.W.array).max() <= 0.05


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


def test_unknown_option_is_rejected_by_setup():
    run = make_run("task=cnn")
    run["framework"]["options"]["xla"] = True
    with pytest.raises(ValueError, match="unknown chainer options"):
        bench_chainer.setup(run)


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
