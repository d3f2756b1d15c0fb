"""Neutral weights (bench_shared.weights) <-> Flax NNX variables.

Where the layouts differ: convolution kernels are H x W x I x O (neutral O x I x H x W); the
CNN's flatten runs over NHWC, so the first dense kernel's rows are permuted from C, H, W to
H, W, C order; batch norm's gamma/beta/mean/var are scale/bias/mean/var; the GRU's input and
recurrent projections are `dense_i` and `dense_h` (gates r, z, n in both). Dense kernels are
(in, out) in both. Native tensors are the nnx.Param and nnx.BatchStat variables, keyed by
their path in the module graph ("stage1.0.conv1.kernel"). Loading, exporting and the
completeness check are the runtime's (bench_shared.slots).
"""

import collections
import re

import jax.numpy as jnp
import numpy as np
from flax import nnx

from bench_shared import slots as protocol
from bench_shared import weights as neutral

FIELDS = {
    "weight": "kernel",
    "bias": "bias",
    "gamma": "scale",
    "beta": "bias",
    "mean": "mean",
    "var": "var",
}
RENAMED = {
    "embedding.weight": "embedding.embedding",
    "gru.input_weight": "gru.dense_i.kernel",
    "gru.recurrent_weight": "gru.dense_h.kernel",
    "gru.input_bias": "gru.dense_i.bias",
    "gru.recurrent_bias": "gru.dense_h.bias",
}


def native_name(name):
    if name in RENAMED:
        return RENAMED[name]
    name = re.sub(r"\.block(\d+)\.", r".\1.", name)  # stage1.block0.conv1 -> stage1.0.conv1
    prefix, field = name.rsplit(".", 1)
    return prefix + "." + FIELDS[field]


def slot(task, name):
    if len(neutral.layout(task)[name]) == 4:
        return protocol.Slot(
            native_name(name), protocol.conv_oihw_to_hwio, protocol.conv_hwio_to_oihw
        )
    if task == "cnn" and name == "dense1.weight":
        return protocol.Slot(
            native_name(name), protocol.cnn_flatten_chw_to_hwc, protocol.cnn_flatten_hwc_to_chw
        )
    return protocol.Slot(native_name(name))


def slots(task):
    """Neutral name -> the path of the Flax variable that holds it."""
    return collections.OrderedDict((name, slot(task, name)) for name in neutral.layout(task))


def _read(variable):
    return np.asarray(variable.get_value())


def _write(variable, value):
    variable.set_value(jnp.asarray(value, variable.get_value().dtype))


def tensors(model):
    """Every nnx.Param and nnx.BatchStat of the network (not the dropout RNG's state, not the
    optimiser's), keyed by path; nnx.state holds the network's own Variable objects, so a
    write lands in the model."""
    state = nnx.state(model.net, (nnx.Param, nnx.BatchStat))
    table = collections.OrderedDict(
        (".".join(str(part) for part in path), variable)
        for path, variable in nnx.to_flat_state(state)
    )
    return protocol.DictTensors(table, _read, _write)
