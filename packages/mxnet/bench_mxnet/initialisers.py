"""SPEC's initialisers as MXNet Initializers (the Keras conventions of the 2018 benchmark,
ilkarman/DeepLearningFrameworks)."""

import mxnet as mx
from mxnet import init

from bench_shared.spec import RNN

# glorot-uniform: MXNet's Xavier with uniform draws over the average fan, magnitude 3
GLOROT_UNIFORM = init.Xavier(rnd_type="uniform", factor_type="avg", magnitude=3)
EMBEDDING = init.Uniform(RNN.embedding_init_range)  # uniform(-r, r)
ORTHOGONAL = init.Orthogonal(scale=1.0, rand_type="normal")  # Keras' orthogonal, gain 1
# He-normal over the fan-in (DenseNet's convolutions): Gaussian draws, std sqrt(2 / fan_in)
HE_NORMAL = init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2)


class PerGate(init.Initializer):
    """Applies `inner` to each gate's block of rows of a (gates * units, n) GRU matrix, as
    Keras and the 2018 benchmark (ilkarman/DeepLearningFrameworks) initialise per gate (one
    Xavier over the stacked matrix would not)."""

    def __init__(self, inner, gates=3):
        super(PerGate, self).__init__(inner=inner.dumps(), gates=gates)
        self._inner, self._gates = inner, gates

    def _init_weight(self, name, arr):
        rows = arr.shape[0] // self._gates
        for gate in range(self._gates):
            block = mx.nd.zeros((rows,) + arr.shape[1:], ctx=arr.context)
            self._inner(init.InitDesc(name), block)
            arr[gate * rows : (gate + 1) * rows] = block


class ByName(init.Initializer):
    """The Module API's global initializer for the rnn: SPEC's initialiser by parameter name.
    FusedRNNCell's packed `gru_parameters` carries FusedRNN(None), which unpacks the vector
    and hands each gate's matrix (`l0_i2h_r_weight`, `l0_h2h_z_weight`, ...) to the global
    initializer. (FusedRNN(<an initializer>) on the variable would be neater, but MXNet 1.9
    cannot deserialise it: it looks the inner initializer up in the wrong registry.)"""

    def _init_weight(self, name, arr):
        if name.startswith("embedding"):
            EMBEDDING._init_weight(name, arr)
        elif "h2h" in name:
            ORTHOGONAL._init_weight(name, arr)
        else:
            GLOROT_UNIFORM._init_weight(name, arr)
