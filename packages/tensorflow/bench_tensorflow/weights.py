"""Neutral weights (bench_shared.weights) <-> this package's models. They are made of Keras
layers, whose layouts (HWIO kernels, the NHWC flatten's dense rows, the GRU's z, r, n gates and
stacked biases) are Keras' on every backend: bench_keras_layers.weights converts them, for
both packages. What is TensorFlow's own here: the model's variables live in `model.net`."""

from bench_keras_layers.weights import batch_norm_places, slots, variable_tensors  # noqa: F401

# (slots, batch_norm_places: the task modules')


def tensors(model):
    """bench_tensorflow's models: every weight of the Keras model (no seed-generator state)."""
    return variable_tensors(model.net.weights)
