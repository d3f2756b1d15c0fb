"""What is MXNet's own in its models (Gluon and Module API): structure, layouts, initialisers,
hybridisation, the runtime's thread set-up and the GPU refusal. SPEC's counts and the
equivalence with the NumPy reference are the shared conformance suite's
(shared/tests/test_conformance.py)."""

import importlib
import os

import mxnet as mx
import numpy as np
import pytest
from conftest import FRAMEWORKS

from bench import testing
from bench_shared import slots, spec


def build(framework, task, *overrides):
    run = testing.make_run(framework, f"task={task}", *overrides)
    package = importlib.import_module(run["framework"]["package"])
    settings = package.setup(run)
    module = importlib.import_module(f"{run['framework']['package']}.{task}")
    return package, module, module.build_model(run), settings


def test_threads_are_set_before_mxnet_loads_and_recorded():
    _, _, _, settings = build("gluon", "cnn")
    cores = len(os.sched_getaffinity(0))
    assert settings["threads"] == cores and os.environ["OMP_NUM_THREADS"] == str(cores)
    assert settings["environment"]["MXNET_CPU_WORKER_NTHREADS"] == "1"
    assert settings["environment"]["OMP_WAIT_POLICY"] == os.environ["OMP_WAIT_POLICY"] == "ACTIVE"
    assert settings["onednn"] and "MKLDNN" in settings["features"]
    assert settings["hybridize"] is True


def test_other_threads_after_mxnet_loaded_are_refused():
    run = testing.make_run("mxnet", "framework.options.threads=7")
    with pytest.raises(ValueError, match="reads these variables only once"):
        importlib.import_module("bench_mxnet.module").setup(run)


def test_resnet50_zoo_is_v1_and_its_1x1_biases_are_excluded():
    package, resnet50, model, _ = build("gluon", "resnet50")
    block = model.net[5][0]  # stage2, first block
    assert block.body[0]._kwargs["stride"] == (2, 2) and block.body[3]._kwargs["stride"] == (1, 1)
    excluded = [model.net.collect_params()[n].data().asnumpy() for n in model.spec_excluded]
    # the biases of conv1 and conv3 in each of the 16 blocks: zero, and not for neutral weights
    assert len(excluded) == 32 and all((b == 0).all() for b in excluded)
    assert sum(b.size for b in excluded) == sum(b * (w + o) for b, w, o, _ in spec.ResNet50.stages)
    assert not model.spec_excluded & set(package.tensors(model).keys())
    x = np.random.RandomState(0).randn(2, 3, 224, 224).astype(np.float32)
    features = resnet50.predict(model, [x])
    assert features.shape == (2, 2048) and features.dtype == np.float32
    assert np.isfinite(features).all() and (features >= 0).all()  # after a ReLU and the pool


def test_gru_is_the_cudnn_form_with_two_bias_vectors():
    _, _, model, _ = build("gluon", "rnn")
    names = sorted(n[n.index("l0_") :] for n in model.net.gru.collect_params())
    assert names == ["l0_h2h_bias", "l0_h2h_weight", "l0_i2h_bias", "l0_i2h_weight"]
    assert model.net.gru._layout == "NTC"
    _, _, model, _ = build("mxnet", "rnn")
    arg_params, _ = model.mod.get_params()
    assert arg_params["gru_parameters"].size == 3 * (125 * 100 + 100 * 100 + 2 * 100)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_gru_initialisers_per_gate(framework):
    _, _, model, _ = build(framework, "rnn")
    weights = model.net.gru.l0_h2h_weight.data() if framework == "gluon" else None
    if weights is None:
        packed = model.mod.get_params()[0]["gru_parameters"]
        weights = packed[3 * 100 * 125 : 3 * 100 * 225].reshape((300, 100))
    for gate in range(3):  # orthogonal per gate, not over the stacked (300, 100) matrix
        block = weights[gate * 100 : (gate + 1) * 100].asnumpy()
        np.testing.assert_allclose(block @ block.T, np.eye(100), atol=1e-4)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_cnn_initialisers_and_dropout_off_at_evaluation(framework):
    _, cnn, model, _ = build(framework, "cnn")
    if framework == "gluon":
        w, b = model.net[0].weight.data().asnumpy(), model.net[0].bias.data().asnumpy()
    else:
        params = model.mod.get_params()[0]
        w, b = params["conv1_weight"].asnumpy(), params["conv1_bias"].asnumpy()
    limit = np.sqrt(6 / (3 * 9 + 50 * 9))  # glorot-uniform, fan over the receptive field
    assert (b == 0).all() and limit * 0.9 < np.abs(w).max() <= limit
    x = np.random.RandomState(0).rand(8, 3, 32, 32).astype(np.float32)
    assert np.array_equal(cnn.predict(model, [x]), cnn.predict(model, [x]))  # dropout off


def test_hybridize_does_not_change_the_cnn():
    x = np.random.RandomState(0).rand(4, 3, 32, 32).astype(np.float32)
    _, cnn, eager, _ = build("gluon", "cnn", "framework.options.hybridize=False")
    _, _, hybrid, _ = build("gluon", "cnn")
    assert not eager.hybridized and hybrid.hybridized
    package = importlib.import_module("bench_mxnet.gluon")
    slots.load_into(package, cnn, "cnn", hybrid, slots.export_from(package, cnn, "cnn", eager))
    np.testing.assert_allclose(
        cnn.predict(hybrid, [x]), cnn.predict(eager, [x]), rtol=1e-5, atol=1e-6
    )


@pytest.mark.skipif(mx.context.num_gpus() > 0, reason="this machine has a GPU")
def test_gpu_without_cuda_is_unsupported():
    run = testing.make_run("gluon", "task=cnn")
    run["device"]["name"] = "gpu"
    with pytest.raises(NotImplementedError, match="device=gpu is not supported by this mxnet"):
        importlib.import_module("bench_mxnet.gluon").setup(run)


def test_gluon_resnet50_int8_runs_onednn_quantized_convolutions():
    """precision=int8: calibrate() replaces the network by quantize_net_v2's SymbolBlock, whose
    graph holds oneDNN's quantized convolutions; its features are near, never equal to,
    fp32's."""
    from bench_shared import reference, weights

    package, module, model, _ = build("gluon", "resnet50", "precision=int8")
    slots.load_into(package, module, "resnet50", model, weights.random_weights("resnet50", 0))
    x = reference.distinct_images(2, seed=1)
    fp32 = module.predict(model, [x])
    model = module.calibrate(model, [reference.distinct_images(2, seed=2)])
    graph = model.net._cached_graph[1].tojson()
    assert graph.count('"quantized": "true"') >= 50, graph[:2000]
    error = reference.relative_error(module.predict(model, [x]), fp32)
    assert 1e-3 < error < 0.3
    assert package.peak_flops("int8") > 0
