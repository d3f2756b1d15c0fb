"""What is PyTorch's own in its models: module structure, initialisers, channels-last, the GPU
refusal. SPEC's counts and the equivalence with the NumPy reference are the shared
conformance suite's (shared/tests/test_conformance.py)."""

import numpy as np
import pytest
import torch
from conftest import make_run

import bench_torch
from bench_shared import spec
from bench_torch import cnn, resnet50, rnn


def test_resnet50_buffers_and_features():
    run = make_run("task=resnet50")
    bench_torch.setup(run)
    model = resnet50.build_model(run)
    buffers = sum(b.numel() for name, b in model.net.named_buffers() if "running" in name)
    assert buffers == spec.ResNet50.buffer_count
    x = np.random.RandomState(0).randn(2, 3, 224, 224).astype(np.float32)
    features = resnet50.predict(model, [x])
    assert features.shape == (2, 2048) and features.dtype == np.float32
    assert np.isfinite(features).all() and (features >= 0).all()  # after a ReLU and the pool


def test_resnet50_int8_is_pt2e_quantized_and_lowered_by_inductor():
    """precision=int8: calibrate() observes the images through PT2E's x86 quantizer, converts
    (every convolution's input quantized to uint8, its weight to int8 per channel) and hands
    predict() Inductor's compiled module; its features are near, never equal to, fp32's."""
    from bench_shared import reference, slots, weights

    run = make_run("task=resnet50", "precision=int8")
    bench_torch.setup(run)
    model = resnet50.build_model(run)
    slots.load_into(
        bench_torch, resnet50, "resnet50", model, weights.random_weights("resnet50", seed=0)
    )
    x = reference.distinct_images(2, seed=1)
    fp32 = resnet50.predict(model, [x])
    model = resnet50.calibrate(model, [reference.distinct_images(2, seed=2)])
    graph = model.inference._orig_mod.graph  # torch.compile keeps the converted module
    quantized = [
        n
        for n in graph.nodes
        if "quantize_per_channel" in str(n.target) or "quantize_per_tensor" in str(n.target)
    ]
    assert len(quantized) > 100
    error = reference.relative_error(resnet50.predict(model, [x]), fp32)
    assert 1e-3 < error < 0.3


def test_int8_peak_is_onednn_s_quantized_linear():
    bench_torch.setup(make_run("task=resnet50", "precision=int8"))
    assert bench_torch.peak_flops("int8") > 0


def test_resnet50_is_v1_stride_on_the_first_1x1():
    net = resnet50.ResNet50Features()
    block = net.stage2[0]
    assert block.conv1.stride == (2, 2) and block.conv2.stride == (1, 1)


def test_gru_is_the_cudnn_form_with_two_bias_vectors():
    net = rnn.GRUClassifier()
    names = dict(net.gru.named_parameters())
    assert set(names) == {"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"}
    assert names["bias_ih_l0"].shape == names["bias_hh_l0"].shape == (300,)
    assert net.gru.batch_first


def test_cnn_initialisers_and_dropout_off_at_evaluation():
    run = make_run("task=cnn")
    bench_torch.setup(run)
    model = cnn.build_model(run)
    convs = [m for m in model.net if isinstance(m, torch.nn.Conv2d)]
    assert all((c.bias == 0).all() for c in convs)
    limit = np.sqrt(6 / (3 * 9 + 50 * 9))  # glorot-uniform, fan over the receptive field
    w = convs[0].weight.detach()
    assert w.abs().max() <= limit and w.abs().max() > 0.9 * limit
    x = np.random.RandomState(0).rand(8, 3, 32, 32).astype(np.float32)
    a, b = cnn.predict(model, [x]), cnn.predict(model, [x])
    assert np.array_equal(a, b)  # eval mode: dropout off, deterministic


def test_channels_last_does_not_change_the_cnn():
    x = np.random.RandomState(0).rand(4, 3, 32, 32).astype(np.float32)
    outputs = []
    for channels_last in (False, True):
        run = make_run("task=cnn", f"framework.options.channels_last={channels_last}")
        bench_torch.setup(run)
        model = cnn.build_model(run)
        assert model.channels_last == channels_last
        outputs.append(cnn.predict(model, [x]))
    np.testing.assert_allclose(outputs[0], outputs[1], rtol=1e-4, atol=1e-5)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_gpu_without_cuda_is_unsupported():
    run = make_run("task=cnn")
    run["device"]["name"] = "gpu"
    with pytest.raises(NotImplementedError, match="device=gpu is not supported by torch"):
        bench_torch.setup(run)
