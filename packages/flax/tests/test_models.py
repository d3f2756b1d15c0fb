"""What is Flax's own in its models: the NHWC layouts (HWIO kernels, HWC flatten), the
cuDNN-form GRU cell (a subclass of nnx.GRUCell, whose own form lacks the hidden-side bias), the
hand-written ResNet-50 v1 (stride on the first 1x1, stages as nnx.List), bf16 compute over
float32 parameters, the GPU refusal. SPEC's counts and the equivalence with the NumPy reference
are the shared conformance suite's (shared/tests/test_conformance.py)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import make_run
from flax import nnx

import bench_flax
from bench import testing
from bench_flax import cnn, resnet50, rnn
from bench_shared import reference, spec


def loaded_model(task, *overrides):
    return testing.loaded_model("flax", task, *overrides)


def built(task, *overrides):
    run = make_run(f"task={task}", *overrides)
    bench_flax.setup(run)
    return {"cnn": cnn, "rnn": rnn, "resnet50": resnet50}[task].build_model(run)


def test_cnn_kernels_are_hwio_and_the_flatten_is_hwc():
    _, model, params = loaded_model("cnn")
    np.testing.assert_array_equal(
        np.asarray(model.net.conv1.kernel.get_value()), params["conv1.weight"].transpose(2, 3, 1, 0)
    )
    c, h, w = spec.CNN.conv_channels[-1], spec.CNN.input_shape[1] // 4, spec.CNN.input_shape[2] // 4
    neutral_rows = params["dense1.weight"].reshape(c, h, w, -1)
    native_rows = np.asarray(model.net.dense1.kernel.get_value()).reshape(h, w, c, -1)
    # the neutral row of channel 5 at (1, 2) is Flax's row at (1, 2) of channel 5
    np.testing.assert_array_equal(native_rows[1, 2, 5], neutral_rows[5, 1, 2])
    assert cnn.native_layout(np.zeros((2, 3, 32, 32))).shape == (2, 32, 32, 3)


def test_flax_own_gru_cell_lacks_the_hidden_bias_and_the_subclass_has_it():
    units, inputs = spec.RNN.hidden_units, spec.RNN.embedding_dim
    stock = nnx.GRUCell(inputs, units, rngs=nnx.Rngs(0))

    def size(cell):
        return sum(p.size for p in jax.tree.leaves(nnx.state(cell, nnx.Param)))

    # why the subclass exists: Flax's cell has 3 bias vectors, SPEC's cuDNN form 6
    assert size(stock) == 3 * (inputs * units + units * units + units)
    net = built("rnn").net
    assert isinstance(net.gru, nnx.GRUCell) and isinstance(net.gru, rnn.CuDNNGRUCell)
    assert size(net.gru) == 3 * (inputs * units + units * units + 2 * units)
    assert net.gru.dense_h.bias.get_value().shape == (3 * units,)


def test_the_hoisted_scan_is_the_cell_stepped_one_token_at_a_time():
    """The classifier projects every step's input at once and scans the recurrent half; the
    cell keeps nnx.GRUCell's interface (carry, x) -> (carry, y): both give the same output,
    and so does the NumPy reference's GRU (r applied to W_hn h + b_hn, both biases)."""
    _, model, params = loaded_model("rnn")
    net = model.net
    tokens = reference.fixed_inputs("rnn")[:4]
    h = jnp.zeros((len(tokens), spec.RNN.hidden_units))
    for t in range(tokens.shape[1]):
        h, _ = net.gru(h, net.embedding(jnp.asarray(tokens[:, t])))
    stepped = np.asarray(net.dense(h))
    np.testing.assert_allclose(stepped, rnn.predict(model, [tokens]), rtol=1e-5, atol=1e-6)
    expected = reference.forward("rnn", params, tokens)
    assert reference.relative_error(stepped, expected) < 1e-5


def test_resnet50_is_v1_with_nnx_lists_and_batch_statistics_apart():
    model = built("resnet50")
    net = model.net
    assert isinstance(net.stage2, nnx.List) and len(net.stage3) == spec.ResNet50.stages[2][0]
    first = net.stage2[0]  # v1: the first 1x1 convolution halves the size, the 3x3 keeps it
    x = jnp.zeros((1, 56, 56, spec.ResNet50.stages[0][2]))
    assert first.conv1(x).shape == (1, 28, 28, 128) and first.conv2(first.conv1(x)).shape[1] == 28
    assert net.stage1[0].shortcut is not None and net.stage1[1].shortcut is None
    keys = bench_flax.tensors(model).keys()
    assert "stage1.0.conv1.kernel" in keys and "stage1.0.shortcut.bn.mean" in keys
    assert sum(k.endswith(".mean") for k in keys) == 53  # every batch norm of ResNet-50
    stats = sum(v.size for v in jax.tree.leaves(nnx.state(net, nnx.BatchStat)))
    assert stats == spec.ResNet50.buffer_count  # running statistics: not parameters


def test_bf16_computes_in_bfloat16_over_float32_parameters():
    _, model, params = loaded_model("cnn", "precision=bf16")
    assert model.net.conv1.dtype == jnp.bfloat16
    assert all(p.dtype == jnp.float32 for p in jax.tree.leaves(nnx.state(model.net, nnx.Param)))
    inputs = reference.fixed_inputs("cnn")
    outputs = cnn.predict(model, [cnn.native_layout(inputs)])
    assert outputs.dtype == np.float32
    error = reference.relative_error(outputs, reference.forward("cnn", params, inputs))
    assert 1e-5 < error < 3e-2  # bf16's rounding, not fp32's


def test_same_seed_same_weights_and_dropout_masks():
    def draws(seed):
        net = built("cnn", f"seed={seed}").net
        net.train()
        masks = [np.asarray(net.drop3(jnp.ones((4, 64)))) for _ in range(2)]
        return np.asarray(net.conv1.kernel.get_value()), masks

    (w0, m0), (w0_again, m0_again), (w1, m1) = draws(0), draws(0), draws(1)
    np.testing.assert_array_equal(w0, w0_again)
    np.testing.assert_array_equal(m0[0], m0_again[0])  # dropout masks from the run's seed
    assert not np.array_equal(m0[0], m0[1])  # a new mask every step
    assert not np.array_equal(w0, w1) and not np.array_equal(m0[0], m1[0])


def test_gpu_without_a_gpu_is_unsupported():
    try:
        settings = bench_flax.setup(make_run("task=cnn", "device=gpu"))
    except NotImplementedError as exc:
        assert "the CPU wheel has no CUDA" in str(exc)
    else:
        assert settings["device"].startswith("cuda")
        pytest.skip("this jax sees a GPU")
