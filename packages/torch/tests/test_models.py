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
