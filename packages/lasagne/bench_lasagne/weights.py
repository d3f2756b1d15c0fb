"""Neutral weights (bench_shared.weights) <-> Lasagne's shared variables.

Lasagne names each parameter <layer name>.<parameter name>; the layers carry the neutral
names' prefixes, so the only mapping is Lasagne's W/b for weight/bias. No conversion at all:
DenseLayer and EmbeddingLayer kernels are (in, out) like the neutral ones, convolutions
O x I x H x W (cross-correlation: bench_lasagne.layers.Conv2DLayer does not flip them), the
GRU's matrices the neutral layout's (gates r, z, n side by side), and the batch-norm layer's
gamma/beta/mean/var the neutral fields. Loading, exporting and the completeness check are the
runtime's (bench_shared.slots).
"""

import collections

import numpy as np
import theano
from lasagne import layers

from bench_shared import slots as protocol
from bench_shared import weights as neutral

FIELDS = {"weight": "W", "bias": "b"}


def lasagne_name(name):
    if name.startswith("gru."):  # bench_lasagne.layers.GRULayer's own names
        return name
    prefix, field = name.rsplit(".", 1)
    return prefix + "." + FIELDS.get(field, field)


def slots(task):
    """Neutral name -> the Lasagne parameter's name."""
    return collections.OrderedDict(
        (name, protocol.Slot.whole(lasagne_name(name))) for name in neutral.layout(task)
    )


def _read(variable):
    return np.array(variable.get_value(borrow=True), dtype=np.float32)


def _write(variable, value):
    variable.set_value(np.asarray(value, dtype=theano.config.floatX))


def tensors(model):
    """Every shared variable of the network (trainable or not: batch-norm statistics), by
    name; the optimiser's state (velocities, Adam's moments) is not the model's."""
    return protocol.DictTensors(
        collections.OrderedDict((p.name, p) for p in layers.get_all_params(model.net)),
        _read,
        _write,
    )
