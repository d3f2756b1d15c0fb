"""SPEC's initialisers where Keras' defaults differ: gate by gate for the GRU.

Keras draws its GRU kernels over the whole (in, 3 * units) matrix: glorot-uniform then has the
limit sqrt(6 / (in + 3 units)) instead of each gate's sqrt(6 / (in + units)), and the
orthogonal recurrent kernel is orthogonal as a whole, not per gate. SPEC (and the 2018
benchmark, ilkarman/DeepLearningFrameworks, whose Keras drew per gate) initialises each gate's
block on its own; the neutral init (`init=neutral`) does the same."""

import keras
import numpy as np
from keras import backend as K


class PerGate(keras.initializers.Initializer):
    """Applies `inner` to each gate's block of columns of a (rows, gates * units) kernel.
    Keras 2's initialisers return a backend tensor (glorot: K.random_uniform) or a NumPy array
    (orthogonal): each block is evaluated to NumPy, the kernel's starting value."""

    def __init__(self, inner, gates=3):
        self.inner, self.gates = inner, gates

    def __call__(self, shape, dtype=None):
        rows, columns = shape
        units = columns // self.gates
        blocks = [self.inner((rows, units), dtype=dtype) for _ in range(self.gates)]
        return np.concatenate(
            [b if isinstance(b, np.ndarray) else K.eval(b) for b in blocks], axis=-1
        ).astype(dtype or K.floatx())

    def get_config(self):
        return {"inner": keras.initializers.serialize(self.inner), "gates": self.gates}


def gru():
    """GRU(...) keyword arguments: per-gate glorot-uniform input and orthogonal recurrent
    kernels (biases: Keras' zeros already)."""
    return {
        "kernel_initializer": PerGate(keras.initializers.glorot_uniform()),
        "recurrent_initializer": PerGate(keras.initializers.Orthogonal()),
    }
