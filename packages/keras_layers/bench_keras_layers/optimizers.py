"""SPEC's Adam on every Keras backend, the Embedding's gradient summed before it is squared.

Keras 3's TensorFlow backend hands an Embedding's gradient to the optimizer as IndexedSlices
holding one slice per occurrence of a token, and Adam squares the slices before they are
summed: a token seen k times in a batch adds sum(g_i^2) to its second moment instead of
(sum g_i)^2 (keras 3.15.1; tests/test_models.py shows it). Its steps on frequent words grow by up
to sqrt(k), and with the same initial weights and batches the GRU learned markedly worse on
TensorFlow than on every other framework (README, "Same start, same data"). Summing the
slices first (a dense gradient, as PyTorch's default Embedding and MXNet's give) is SPEC's
Adam. On JAX and PyTorch the gradient is already dense: nothing changes there.
"""

import keras


class Adam(keras.optimizers.Adam):
    def update_step(self, gradient, variable, learning_rate):
        if keras.backend.backend() == "tensorflow":  # keras.ops keeps IndexedSlices as they are
            import tensorflow as tf

            gradient = tf.convert_to_tensor(gradient)  # dense: repeated slices summed
        return super().update_step(gradient, variable, learning_rate)


def adam(cfg):
    """SPEC's Adam from the task's optimizer section."""
    return Adam(cfg["lr"], beta_1=cfg["beta1"], beta_2=cfg["beta2"], epsilon=cfg["eps"])
