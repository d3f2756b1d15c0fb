"""Neutral weights (bench_shared.weights) <-> Chainer links.

The only place where Chainer's layouts meet the neutral ones: L.Linear stores W as (out, in),
the neutral format as (in, out); convolutions are O x I x H x W in both; batch norm's running
statistics are avg_mean/avg_var; L.NStepGRU keeps each gate's matrices apart, w0..w2 for the
input (gates r, z, n: the neutral order) and w3..w5 for the recurrent side, each (out, in),
with one bias per matrix, b0..b5 -- the cuDNN form's two bias vectors per gate.
"""
import collections
import re

import chainer
import numpy as np
from chainer.backends import cuda

from bench_shared import spec
from bench_shared import weights as neutral

BATCH_NORM = {"gamma": "gamma", "beta": "beta", "mean": "avg_mean", "var": "avg_var"}
TRANSPOSED = {"dense1.weight", "dense2.weight", "dense.weight"}  # (in, out) -> Linear's (out, in)
GRU_GATES = {"gru.input_weight": 0, "gru.recurrent_weight": 3,  # first w/b index of r, z, n
             "gru.input_bias": 0, "gru.recurrent_bias": 3}

Slot = collections.namedtuple("Slot", "path attr cols transpose")


def _resnet_path(prefix):
    """stem.conv -> /conv1, stage2.block0.conv1 -> /res3/a/conv1, .shortcut.bn -> /a/bn4."""
    if prefix.startswith("stem."):
        return {"stem.conv": "/conv1", "stem.bn": "/bn1"}[prefix]
    s, b, layer = re.match(r"stage(\d)\.block(\d+)\.(.+)$", prefix).groups()
    block = "a" if b == "0" else "b%s" % b
    layer = {"shortcut.conv": "conv4", "shortcut.bn": "bn4"}.get(layer, layer)
    return "/res%d/%s/%s" % (int(s) + 1, block, layer)


def slots(task):
    """Neutral name -> the Chainer arrays it fills, in the neutral layout's order."""
    table = collections.OrderedDict()
    units = spec.RNN.hidden_units
    for name in neutral.layout(task):
        prefix, field = name.rsplit(".", 1)
        if name in GRU_GATES:
            kind = "w" if field.endswith("weight") else "b"
            table[name] = [Slot("/gru/0", "%s%d" % (kind, GRU_GATES[name] + g),
                                slice(g * units, (g + 1) * units), kind == "w")
                           for g in range(3)]
            continue
        path = _resnet_path(prefix) if task == "resnet50" else "/" + prefix
        attr = BATCH_NORM[field] if field in BATCH_NORM else {"weight": "W", "bias": "b"}[field]
        table[name] = [Slot(path, attr, None, name in TRANSPOSED)]
    return table


def _array(links, slot):
    value = getattr(links[slot.path], slot.attr)
    return value.array if isinstance(value, chainer.Variable) else value


def load(net, table, params):
    """Copy neutral weights into the Chain in place; every parameter must be filled once."""
    links = dict(net.namedlinks())
    filled = set()
    for name, value in params.items():
        for slot in table[name]:
            part = value if slot.cols is None else value[..., slot.cols]
            part = part.T if slot.transpose else part
            target = _array(links, slot)
            if target.shape != part.shape:
                raise ValueError("%s -> %s/%s: shape %s, the link holds %s"
                                 % (name, slot.path, slot.attr, part.shape, target.shape))
            target[...] = chainer.backend.get_array_module(target).asarray(part)
            filled.add(slot.path + "/" + slot.attr)
    unfilled = sorted(set(n for n, _ in net.namedparams()) - filled)
    if unfilled:
        raise ValueError("neutral weights do not fill the Chainer model: %s" % unfilled[:5])


def export(net, table):
    """Neutral float32 arrays from the Chain."""
    links = dict(net.namedlinks())
    params = collections.OrderedDict()
    for name, name_slots in table.items():
        parts = [cuda.to_cpu(_array(links, slot)) for slot in name_slots]
        parts = [p.T if slot.transpose else p for p, slot in zip(parts, name_slots)]
        value = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=-1)
        params[name] = np.ascontiguousarray(value, np.float32)
    return params
