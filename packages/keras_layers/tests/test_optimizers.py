"""SPEC's Adam on Keras 3 (bench_keras_layers.optimizers), on this session's backend."""

import keras
import numpy as np
import pytest

from bench_keras_layers import optimizers


@pytest.mark.skipif(
    keras.backend.backend() != "tensorflow",
    reason="only TensorFlow hands an Embedding's gradient over as one slice "
    "per occurrence (IndexedSlices); JAX and PyTorch give it dense",
)
def test_adam_sums_an_embeddings_repeated_slices_before_squaring():
    """Token 1 seen four times, gradient 1 each: summed, 4; Adam's first step is lr whatever the
    gradient's size. Keras' own Adam squares the slices first (second moment 4, not 16) and
    steps 2 lr: bench_keras_layers.optimizers.Adam is SPEC's."""
    import tensorflow as tf

    def first_step(optimizer):
        row = keras.Variable(np.zeros((4, 1), "float32"))
        slices = tf.IndexedSlices(tf.ones((4, 1)), tf.constant([1, 1, 1, 1]), tf.constant([4, 1]))
        optimizer.apply([slices], [row])
        return keras.ops.convert_to_numpy(row.value)[:, 0]

    lr = 0.1
    assert np.allclose(first_step(optimizers.Adam(lr)), [0, -lr, 0, 0], rtol=1e-5)
    assert np.allclose(first_step(keras.optimizers.Adam(lr)), [0, -2 * lr, 0, 0], rtol=1e-4)
