"""What is Lasagne's own here: the layers bench_lasagne adds (padded cross-correlation
convolution, batch norm, the cuDNN-form GRU), the downsample shim, the switches and the
compile-time record. SPEC's counts and the equivalence with the NumPy reference (all three
tasks) are the shared conformance suite's."""

import numpy as np
import pytest
import theano
import theano.tensor as T
from conftest import make_run
from lasagne import layers

import bench_lasagne
from bench_lasagne import cnn
from bench_lasagne.layers import BatchNormLayer, Conv2DLayer, GRULayer
from bench_shared import spec


def compiled(layer, input_var, **kwargs):
    return theano.function([input_var], layers.get_output(layer, **kwargs))


def test_gru_holds_spec_cudnn_form_in_the_neutral_layout():
    e, h = spec.RNN.embedding_dim, spec.RNN.hidden_units
    gru = GRULayer(layers.InputLayer((None, spec.RNN.seq_len, e)), h, name="gru")
    shapes = {p.name: p.get_value().shape for p in gru.get_params()}
    assert shapes == {
        "gru.input_weight": (e, 3 * h),
        "gru.recurrent_weight": (h, 3 * h),
        "gru.input_bias": (3 * h,),
        "gru.recurrent_bias": (3 * h,),
    }
    assert gru.output_shape == (None, h)  # the last time step only
    # Lasagne 0.1's own GRULayer: one bias per gate, hence bench_lasagne's layer
    theirs = layers.GRULayer(layers.InputLayer((None, spec.RNN.seq_len, e)), h)
    assert (
        sum(p.get_value().size for p in theirs.get_params(trainable=True) if p.ndim == 1) == 3 * h
    )


def test_batch_norm_uses_running_statistics_and_only_those():
    x = T.tensor4("x")
    bn = BatchNormLayer(layers.InputLayer((None, 3, 2, 2), x), epsilon=1e-5)
    assert {p.name for p in bn.get_params(trainable=True)} == {"gamma", "beta"}
    rng = np.random.RandomState(0)
    values = {
        "gamma": rng.rand(3) + 0.5,
        "beta": rng.randn(3),
        "mean": rng.randn(3),
        "var": rng.rand(3) + 0.1,
    }
    for p in bn.get_params():
        p.set_value(values[p.name].astype(np.float32))
    data = rng.randn(4, 3, 2, 2).astype(np.float32)
    per_channel = {k: v[:, None, None] for k, v in values.items()}
    expected = (data - per_channel["mean"]) / np.sqrt(per_channel["var"] + 1e-5) * per_channel[
        "gamma"
    ] + per_channel["beta"]
    np.testing.assert_allclose(
        compiled(bn, x, deterministic=True)(data), expected, rtol=1e-5, atol=1e-5
    )
    with pytest.raises(NotImplementedError, match="running statistics only"):
        layers.get_output(bn)  # training mode: batch statistics are not implemented


def test_conv_is_an_unflipped_padded_cross_correlation():
    x = T.tensor4("x")
    conv = Conv2DLayer(
        layers.InputLayer((None, 1, 5, 5), x), 1, 3, stride=2, pad=1, b=None, nonlinearity=None
    )
    kernel = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
    conv.W.set_value(kernel)
    image = np.random.RandomState(1).randn(1, 1, 5, 5).astype(np.float32)
    padded = np.pad(image[0, 0], 1)
    expected = np.array(
        [
            [(padded[i : i + 3, j : j + 3] * kernel[0, 0]).sum() for j in (0, 2, 4)]
            for i in (0, 2, 4)
        ]
    )
    out = compiled(conv, x)(image)
    assert conv.output_shape[1:] == out.shape[1:] == (1, 3, 3)
    np.testing.assert_allclose(out[0, 0], expected, rtol=1e-5, atol=1e-5)
    assert "Pad" not in str(theano.printing.debugprint(compiled(conv, x), file="str"))


def test_downsample_shim_maps_lasagne_pooling_onto_theano_pool():
    import theano.tensor.signal.downsample as downsample

    assert downsample.max_pool_2d is bench_lasagne.compat.max_pool_2d
    x = T.tensor4("x")
    pool = layers.MaxPool2DLayer(layers.InputLayer((None, 1, 4, 4), x), 3, stride=2, pad=1)
    image = -np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    # the padding never wins a max: ResNet-50's 3x3/2 pool with pad 1
    np.testing.assert_array_equal(compiled(pool, x)(image)[0, 0], [[-1, -2], [-5, -6]])


def test_compile_happens_in_build_model_and_is_recorded():
    run = make_run("task=cnn")
    settings = bench_lasagne.setup(run)
    cnn.build_model(run)
    # both functions compiled in build_model (not in the first training step), their seconds
    # in the settings the worker writes to result.json
    assert set(settings["compile_seconds"]) == {"cnn.train", "cnn.predict"}
    assert all(seconds > 0 for seconds in settings["compile_seconds"].values())


def test_openmp_and_threads_switches_reach_theano():
    run = make_run("task=cnn", "framework.options.openmp=false", "framework.options.threads=1")
    settings = bench_lasagne.setup(run)
    assert theano.config.openmp is False and settings["openmp"] is False
    assert settings["omp_num_threads"] == 1 and settings["blas_threads"] == 1
    x = T.tensor4("x")
    conv = Conv2DLayer(layers.InputLayer((None, 1, 5, 5), x), 1, 3, pad=1)
    ops = [node.op for node in compiled(conv, x).maker.fgraph.toposort()]
    convolutions = [op for op in ops if type(op).__name__ == "CorrMM"]
    assert convolutions and all(op.openmp is False for op in convolutions)
    bench_lasagne.setup(make_run("task=cnn"))
    assert theano.config.openmp is True
