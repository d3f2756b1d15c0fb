"""Chainer's layouts against the neutral ones (bench_shared.weights): the weight protocol's
slots and tensors (bench_shared.slots does the loading, exporting and completeness check).

L.Linear stores W as (out, in), the neutral format as (in, out); convolutions are O x I x H x W
in both; batch norm's running statistics are the persistent values avg_mean/avg_var;
L.NStepGRU keeps each gate's matrices apart, w0..w2 for the input (gates r, z, n: the neutral
order) and w3..w5 for the recurrent side, each (out, in), with one bias per matrix, b0..b5 --
the cuDNN form's two bias vectors per gate. Keys are Chainer's own paths: namedparams()'s
(/conv1/W, /gru/0/w0) and the batch-norm links' paths plus /avg_mean, /avg_var.
"""

import collections
import re

import chainer
import chainer.links as L
import numpy as np
from chainer.backends import cuda

from bench_shared import slots as protocol
from bench_shared import spec
from bench_shared import weights as neutral

BATCH_NORM = {"gamma": "gamma", "beta": "beta", "mean": "avg_mean", "var": "avg_var"}
RUNNING_STATISTICS = ("avg_mean", "avg_var")  # persistent values, not parameters
# (in, out) -> Linear's (out, in)
TRANSPOSED = {"dense1.weight", "dense2.weight", "dense.weight", "classifier.weight"}
GRU_GATES = {
    "gru.input_weight": 0,
    "gru.recurrent_weight": 3,  # first w/b index of r, z, n
    "gru.input_bias": 0,
    "gru.recurrent_bias": 3,
}


def _resnet_path(prefix):
    """stem.conv -> /conv1, stage2.block0.conv1 -> /res3/a/conv1, .shortcut.bn -> /a/bn4."""
    if prefix.startswith("stem."):
        return {"stem.conv": "/conv1", "stem.bn": "/bn1"}[prefix]
    s, b, layer = re.match(r"stage(\d)\.block(\d+)\.(.+)$", prefix).groups()
    block = "a" if b == "0" else "b%s" % b
    layer = {"shortcut.conv": "conv4", "shortcut.bn": "bn4"}.get(layer, layer)
    return "/res%d/%s/%s" % (int(s) + 1, block, layer)


def _per_gate(transposed, units=spec.RNN.hidden_units):
    """(to_native, from_native) between a neutral (..., 3 * units) tensor and three per-gate
    arrays (a matrix's columns of one gate, transposed to Chainer's (out, in))."""

    def to_native(value):
        parts = [value[..., g * units : (g + 1) * units] for g in range(3)]
        return [np.ascontiguousarray(p.T if transposed else p) for p in parts]

    def from_native(arrays):
        return np.concatenate([a.T if transposed else a for a in arrays], axis=-1)

    return to_native, from_native


def slots(task):
    """Neutral name -> the Chainer array(s) it fills, in the neutral layout's order."""
    table = collections.OrderedDict()
    for name in neutral.layout(task):
        prefix, field = name.rsplit(".", 1)
        if name in GRU_GATES:
            kind = "w" if field.endswith("weight") else "b"
            keys = ["/gru/0/%s%d" % (kind, GRU_GATES[name] + g) for g in range(3)]
            table[name] = protocol.Slot.split_over(keys, *_per_gate(kind == "w"))
            continue
        # DenseNet's links are nested Chains named as the neutral prefix: block1.layer0.bn1
        # is /block1/layer0/bn1
        path = _resnet_path(prefix) if task == "resnet50" else "/" + prefix.replace(".", "/")
        attr = BATCH_NORM[field] if field in BATCH_NORM else {"weight": "W", "bias": "b"}[field]
        table[name] = protocol.Slot.whole(path + "/" + attr, name in TRANSPOSED)
    return table


def _array(value):
    return value.array if isinstance(value, chainer.Variable) else value


def _read(value):
    return cuda.to_cpu(_array(value))


def _write(value, array):
    target = _array(value)  # in place: the optimiser and the links hold these arrays
    target[...] = chainer.backend.get_array_module(target).asarray(array)


def tensors(model):
    """Every parameter (namedparams) and every batch norm's running mean and variance."""
    table = collections.OrderedDict(model.net.namedparams())
    for path, link in model.net.namedlinks():
        if isinstance(link, L.BatchNormalization):
            for attr in RUNNING_STATISTICS:
                table[path + "/" + attr] = getattr(link, attr)
    return protocol.DictTensors(table, _read, _write)
