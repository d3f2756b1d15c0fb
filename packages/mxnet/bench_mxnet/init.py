"""SPEC's initialisers as MXNet Initializers (the seed's Keras conventions)."""
import mxnet as mx
from mxnet import init

# glorot-uniform: MXNet's Xavier with uniform draws over the average fan, magnitude 3
GLOROT_UNIFORM = init.Xavier(rnd_type="uniform", factor_type="avg", magnitude=3)
EMBEDDING = init.Uniform(0.05)  # uniform(-0.05, 0.05)
ORTHOGONAL = init.Orthogonal(scale=1.0, rand_type="normal")  # Keras' orthogonal, gain 1


class PerGate(init.Initializer):
    """Applies `inner` to each gate's block of rows of a (gates * units, n) GRU matrix, as
    Keras and the seed initialise per gate (one Xavier over the stacked matrix would not)."""

    def __init__(self, inner, gates=3):
        super(PerGate, self).__init__(inner=inner.dumps(), gates=gates)
        self._inner, self._gates = inner, gates

    def _init_weight(self, name, arr):
        rows = arr.shape[0] // self._gates
        for gate in range(self._gates):
            block = mx.nd.zeros((rows,) + arr.shape[1:], ctx=arr.context)
            self._inner(init.InitDesc(name), block)
            arr[gate * rows:(gate + 1) * rows] = block

