"""What is Paddle's own in its models: the GRU's form, ResNet-50's stride and statistics, the
to_static and NHWC switches giving the same numbers as dygraph NCHW, threads, and the precisions
it refuses. SPEC's counts and the equivalence with the NumPy reference are the shared
conformance suite's (shared/tests/test_conformance.py)."""

import warnings

import numpy as np
import paddle
import pytest
from conftest import make_run
from paddle.jit.dy2static.program_translator import StaticFunction

import bench_paddle
from bench_paddle import cnn, loop, resnet50, rnn
from bench_shared import contract, reference, reference_train, slots, spec, weights


def build(module, *overrides, task=None):
    run = make_run("task=" + (task or module.__name__.rsplit(".", 1)[1]), *overrides)
    if run["task"]["name"] == "cnn":
        run["task"]["dropout"] = False
    settings = bench_paddle.setup(run)
    return run, settings, module.build_model(run)


def loaded(module, *overrides):
    run, _, model = build(module, *overrides)
    task = run["task"]["name"]
    params = weights.random_weights(task, seed=0)
    slots.load_into(bench_paddle, module, task, model, params)
    return model, params


def test_resnet50_is_v1_stride_on_the_first_1x1_with_its_statistics():
    net = resnet50.ResNet50Features()
    block = net.stage2[0]
    assert block.conv1._stride == [2, 2] and block.conv2._stride == [1, 1]
    statistics = sum(
        int(p.size) for name, p in net.named_parameters() if name.endswith(("_mean", "_variance"))
    )
    assert statistics == spec.ResNet50.buffer_count
    assert all(
        not p.trainable
        for name, p in net.named_parameters()
        if name.endswith(("_mean", "_variance"))
    )


def test_gru_is_the_cudnn_form_with_two_bias_vectors_listed_once():
    net = rnn.GRUClassifier()
    names = dict(net.gru.named_parameters())
    assert set(names) == {"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"}
    assert names["bias_ih_l0"].shape == names["bias_hh_l0"].shape == [300]
    assert names["weight_ih_l0"].shape == [300, 125]  # (3 * units, in): slots transpose it
    assert len(net.gru.state_dict()) == 8  # each weight twice, under the cell's name too
    model = loop.Model(make_run("task=rnn"), net)
    assert len(bench_paddle.tensors(model).keys()) == 7  # embedding, the GRU's 4, dense 2


@pytest.mark.parametrize("module", [cnn, rnn], ids=["cnn", "rnn"])
def test_to_static_gives_dygraph_numbers(module):
    """The same weights and batches: predictions and training losses of the to_static
    program equal dygraph's (the switch changes speed, not maths)."""
    task = module.__name__.rsplit(".", 1)[1]
    inputs = reference.fixed_inputs(task)
    batches = reference_train.fixed_batches(task, 3, batch_size=8)
    outputs, losses = [], []
    for to_static in (False, True):
        model, _ = loaded(module, "framework.options.to_static=%s" % to_static)
        assert model.to_static is to_static
        assert isinstance(model.net.forward, StaticFunction) is to_static
        outputs.append(module.predict(model, [inputs]))
        losses.append([module.train_epoch(model, [b]) for b in batches])
    np.testing.assert_allclose(outputs[1], outputs[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-5)
    assert losses[0][-1] != losses[0][0]


def test_to_static_gives_dygraph_features():
    x = reference.fixed_inputs("resnet50")[:2]
    features = []
    for to_static in (False, True):
        model, _ = loaded(
            resnet50,
            "framework.options.to_static=%s" % to_static,
            "framework.options.predictor=false",
        )
        assert isinstance(model.net.forward, StaticFunction) is to_static
        features.append(resnet50.predict(model, [x]))
    np.testing.assert_allclose(features[1], features[0], rtol=1e-5, atol=1e-5)


def test_predictor_gives_dygraph_features_and_only_for_inference():
    """Paddle Inference (oneDNN, IR passes), built at the first predict from the loaded
    weights: the features of dygraph, within fp32 summation-order differences."""
    x = reference.fixed_inputs("resnet50")[:2]
    model, _ = loaded(resnet50, "framework.options.predictor=false")
    dygraph = resnet50.predict(model, [x])
    model, _ = loaded(resnet50)  # conf/task_framework/resnet50_paddle.yaml: on by default
    assert model.use_predictor
    assert model.predictor is None  # not before the weights are in
    features = resnet50.predict(model, [x])
    assert model.predictor is not None
    np.testing.assert_allclose(features, dygraph, rtol=1e-4, atol=1e-4 * np.abs(dygraph).max())
    with pytest.raises(ValueError, match="predictor=true applies to task=resnet50"):
        build(cnn, "framework.options.predictor=true")


@pytest.mark.parametrize("module", [cnn, resnet50], ids=["cnn", "resnet50"])
def test_nhwc_gives_nchw_numbers_and_round_trips(module):
    task = module.__name__.rsplit(".", 1)[1]
    x = reference.fixed_inputs(task)[:2]
    outputs = []
    for fmt in ("NCHW", "NHWC"):
        model, params = loaded(
            module, "framework.options.data_format=" + fmt, "framework.options.predictor=false"
        )
        layout = contract.hook(module, "native_layout")
        assert layout(x).shape == (x.shape if fmt == "NCHW" else x.transpose(0, 2, 3, 1).shape)
        outputs.append(module.predict(model, [layout(x)]))
        exported = slots.export_from(bench_paddle, module, task, model)
        assert all(np.array_equal(exported[k], params[k]) for k in params)
    np.testing.assert_allclose(outputs[1], outputs[0], rtol=1e-4, atol=1e-5)


def test_threads_reach_paddles_openmp_runtime():
    for threads in (1, 2):
        _, settings, _ = build(cnn, "framework.options.threads=%d" % threads)
        assert settings["threads"] == threads
        assert settings["openmp_max_threads"] == settings["mkl_max_threads"] == threads


def test_autocast_is_a_no_op_on_the_cpu_so_bf16_is_not_declared():
    """Why conf/framework/paddle.yaml declares cpu: [fp32]: a Paddle whose CPU autocast works
    fails this test, saying bf16 should be declared (and measured)."""
    paddle.set_device("cpu")
    conv = paddle.nn.Conv2D(3, 4, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with paddle.amp.auto_cast(dtype="bfloat16"):
            y = conv(paddle.rand([1, 3, 8, 8]))
    assert y.dtype == paddle.float32, "CPU bf16 autocast works now: declare bf16 for cpu"
    run = make_run("task=cnn")
    run["precision"] = "bf16"
    with pytest.raises(NotImplementedError) as refused:
        contract.check_run(run)
    message = str(refused.value)  # with the reason conf/framework/paddle.yaml declares
    assert message.startswith(
        "precision=bf16 is not supported by framework=paddle on "
        "device=cpu (Paddle 3.3's AMP is for CUDA, XPU and custom places"
    )
    assert message.endswith("; supported there: fp32")


@pytest.mark.skipif(paddle.device.is_compiled_with_cuda(), reason="a CUDA build of Paddle")
def test_gpu_without_cuda_is_unsupported():
    run = make_run("task=cnn")
    run["device"]["name"] = "gpu"
    with pytest.raises(NotImplementedError, match="device=gpu is not supported by paddlepaddle"):
        bench_paddle.setup(run)
