"""Neutral weights (bench_shared.weights) <-> the graph's initializers.

The only place where ONNX's names meet the neutral ones: an initializer is named after the
operator input it feeds -- Conv's `W` (O x I x H x W, the neutral layout), BatchNormalization's
`scale`, `B`, `input_mean`, `input_var` (the neutral gamma, beta, mean, var) -- so no value is
transposed, only renamed. Loading, exporting and the completeness check are the runtime's
(bench_shared.slots); the initializers live in the model (loop.Model), not in the session.
"""

import collections

import numpy as np

from bench_shared import slots as protocol
from bench_shared import weights as neutral

ONNX_INPUTS = {
    "weight": "W",
    "gamma": "scale",
    "beta": "B",
    "mean": "input_mean",
    "var": "input_var",
}


def onnx_name(name):
    prefix, field = name.rsplit(".", 1)
    return prefix + "." + ONNX_INPUTS[field]


def slots(task):
    """Neutral name -> the initializer the graph names after it."""
    return collections.OrderedDict(
        (name, protocol.Slot.whole(onnx_name(name))) for name in neutral.layout(task)
    )


def initializers(task, seed):
    """SPEC's initial weights as initializers: ONNX has no initialisers of its own, so
    init=native and init=neutral are the same NumPy draw (bench_shared.weights)."""
    return collections.OrderedDict(
        (onnx_name(name), value) for name, value in neutral.initial_weights(task, seed).items()
    )


class Initializers(protocol.Tensors):
    """The model's initializers. Writes are buffered and committed together: a session is
    made from the whole graph at once, so a load drops it and the next predict makes one."""

    def __init__(self, model):
        self.model, self.pending = model, collections.OrderedDict()

    def keys(self):
        return list(self.model.initializers)

    def read(self, key):
        view = self.model.initializers[key].view()
        view.flags.writeable = False  # an exported array must not alias a writable weight
        return view

    def write(self, key, value):
        self.pending[key] = np.array(value, np.float32)

    def commit(self):
        if self.pending:
            self.model.replace(self.pending)
        self.pending = collections.OrderedDict()


def tensors(model):
    return Initializers(model)
