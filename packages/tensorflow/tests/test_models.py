"""What is TensorFlow's own in its models: Keras' layouts (HWIO kernels, HWC flatten, GRU gate
order and stacked biases), the initialisers, the explicit stem padding, the GPU refusal. SPEC's
counts and the equivalence with the NumPy reference are the shared conformance suite's
(shared/tests/test_conformance.py)."""

import numpy as np
import pytest
import tensorflow as tf
from conftest import make_run

import bench_tensorflow
from bench import testing
from bench_shared import spec
from bench_tensorflow import resnet50, rnn


def loaded_model(task, *overrides):
    return testing.loaded_model("tensorflow", task, *overrides)


def test_cnn_kernels_are_hwio_and_the_flatten_is_hwc():
    _, model, params = loaded_model("cnn")
    np.testing.assert_array_equal(
        model.net.conv1.kernel.numpy(), params["conv1.weight"].transpose(2, 3, 1, 0)
    )
    c, h, w = spec.CNN.conv_channels[-1], spec.CNN.input_shape[1] // 4, spec.CNN.input_shape[2] // 4
    neutral_rows = params["dense1.weight"].reshape(c, h, w, -1)
    native_rows = model.net.dense1.kernel.numpy().reshape(h, w, c, -1)
    # the neutral row of channel 5 at (1, 2) is Keras' row at (1, 2) of channel 5
    np.testing.assert_array_equal(native_rows[1, 2, 5], neutral_rows[5, 1, 2])


def test_keras_gru_gate_order_and_stacked_biases_are_converted():
    _, model, params = loaded_model("rnn")
    cell, units = model.net.gru.cell, spec.RNN.hidden_units
    # Keras stores z, r, n: its first block is the neutral format's second (z)
    assert np.array_equal(
        cell.kernel.numpy()[:, :units], params["gru.input_weight"][:, units : 2 * units]
    )
    bias = cell.bias.numpy()
    assert bias.shape == (2, 3 * units)  # row 0: input bias, row 1: recurrent bias
    assert np.array_equal(bias[1, units : 2 * units], params["gru.recurrent_bias"][:units])
    table = rnn.slots(model)
    assert table["gru.input_bias"].keys == table["gru.recurrent_bias"].keys
    assert (table["gru.input_bias"].parts, table["gru.recurrent_bias"].parts) == ((0,), (1,))


def test_tensors_are_the_variables_by_path_with_the_moving_statistics():
    run = make_run("task=resnet50")
    bench_tensorflow.setup(run)
    model = resnet50.build_model(run)
    keys = bench_tensorflow.tensors(model).keys()
    assert keys == [v.path for v in model.net.weights]
    assert sum("moving_mean" in k for k in keys) == 53  # every batch norm of ResNet-50
    assert not model.net.trainable_weights  # frozen feature extractor


def test_initialisers_follow_spec():
    run = make_run("task=rnn")
    bench_tensorflow.setup(run)
    net = rnn.build_model(run).net
    embeddings = net.embedding.embeddings.numpy()
    assert np.abs(embeddings).max() <= spec.RNN.embedding_init_range
    assert embeddings.std() > spec.RNN.embedding_init_range / 3  # uniform, not near zero
    assert not np.any(net.gru.cell.bias.numpy())
    # per gate (bench_keras_layers/initialisers.py): each (units, units) recurrent block is
    # orthogonal, which Keras' default (orthogonal over the whole (units, 3 * units) matrix) is not
    recurrent = net.gru.cell.recurrent_kernel.numpy()
    for block in np.split(recurrent, 3, axis=1):
        np.testing.assert_allclose(block.T @ block, np.eye(spec.RNN.hidden_units), atol=1e-4)
    limit = np.sqrt(6 / (spec.RNN.embedding_dim + spec.RNN.hidden_units))  # one gate's fans
    for block in np.split(net.gru.cell.kernel.numpy(), 3, axis=1):
        assert 0.8 * limit < np.abs(block).max() <= limit


def test_resnet50_stem_pads_explicitly():
    run = make_run("task=resnet50")
    bench_tensorflow.setup(run)
    net = resnet50.build_model(run).net
    r = spec.ResNet50
    assert net.stem_conv.kernel.shape[:2] == (r.stem_kernel, r.stem_kernel)
    assert net.stem_conv.padding == "valid" and net.pool.padding == "valid"
    c, h, w = r.input_shape
    x = tf.zeros((1, h, w, c))
    stem = net.pool(net.pool_pad(net.stem_conv(net.stem_pad(x))))
    assert stem.shape[1] == h // 4 and stem.shape[3] == r.stem_channels


@pytest.mark.skipif(bool(tf.config.list_physical_devices("GPU")), reason="this machine has a GPU")
def test_gpu_without_a_gpu_is_unsupported():
    run = make_run("task=cnn", "device=gpu")
    with pytest.raises(NotImplementedError, match="sees no GPU"):
        bench_tensorflow.setup(run)


@pytest.mark.parametrize("shard", [(0, 1), (1, 2)])
def test_the_native_pipeline_gathers_the_shared_order_and_stamps_each_batch(shard):
    """native_pipeline gathers each batch inside tf.data (bench_tensorflow.pipeline.gathered):
    the same batches as TrainBatches hands over, in order, this rank's share of each, and the
    runtime's clock stamped as the loop asks for each (the sync once, after the first)."""
    from bench_shared import batching
    from bench_tensorflow import loop

    rng = np.random.RandomState(0)
    x, y = rng.rand(40, 3, 2).astype("float32"), np.arange(40, dtype="int64")
    calls = []
    batches = batching.TrainBatches(
        x, y, 4, 7, 2, sync=lambda: calls.append("sync"), on_batch=calls.append, shard=shard
    )
    read = [(bx.numpy(), by.numpy()) for bx, by in loop._pipeline(batches)]
    expected = list(batching.TrainBatches(x, y, 4, 7, 2, shard=shard))
    assert len(read) == len(expected) == 40 // (4 * shard[1])
    for (bx, by), (ex, ey) in zip(read, expected):
        np.testing.assert_array_equal(bx, ex)
        np.testing.assert_array_equal(by, ey)
    assert calls == [0, "sync"] + list(range(1, len(read)))
    assert len(batches.stamps) == len(read) + 1 and batches.stamps == sorted(batches.stamps)
