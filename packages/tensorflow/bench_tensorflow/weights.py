"""Neutral weights (bench_shared.weights) <-> Keras layer variables (TensorFlow layouts).

Where the layouts differ: convolution kernels are H x W x I x O (neutral O x I x H x W);
the CNN's flatten runs over NHWC, so the first dense kernel's rows are permuted from C, H, W
to H, W, C order; Keras' GRU orders its gates z, r, n (neutral r, z, n) and stacks its two
bias vectors into one (2, 3*units) variable; batch norm's statistics are moving_mean and
moving_variance. Dense kernels are (in, out) in both.
"""
import collections

import numpy as np

from bench_shared import spec


def swap_first_two_gates(a):
    """r, z, n <-> z, r, n along the last axis (its own inverse)."""
    r, z, n = np.split(a, 3, axis=-1)
    return np.concatenate([z, r, n], axis=-1)


def _flatten_rows(kernel, order_from, order_to):
    c, h, w = spec.CNN.conv_channels[-1], spec.CNN.input_shape[1] // 4, spec.CNN.input_shape[2] // 4
    dims = {"c": c, "h": h, "w": w}
    shaped = kernel.reshape([dims[d] for d in order_from] + [kernel.shape[1]])
    perm = [order_from.index(d) for d in order_to] + [3]
    return shaped.transpose(perm).reshape(kernel.shape)


def to_native(task, name, value):
    if value.ndim == 4:
        return value.transpose(2, 3, 1, 0)
    if task == "cnn" and name == "dense1.weight":
        return _flatten_rows(value, "chw", "hwc")
    if name.startswith("gru."):
        return swap_first_two_gates(value)
    return value


def from_native(task, name, value):
    if value.ndim == 4:
        return value.transpose(3, 2, 0, 1)
    if task == "cnn" and name == "dense1.weight":
        return _flatten_rows(value, "hwc", "chw")
    if name.startswith("gru."):
        return swap_first_two_gates(value)
    return value


def load(task, slots, params):
    """slots: neutral name -> (variable, row or None); row indexes a stacked variable."""
    pending = {}
    for name, value in params.items():
        variable, row = slots[name]
        value = to_native(task, name, np.asarray(value))
        if row is None:
            variable.assign(value)
        else:
            stacked = pending.setdefault(id(variable), (variable, np.array(variable.numpy())))[1]
            stacked[row] = value
    for variable, stacked in pending.values():
        variable.assign(stacked)


def export(task, slots):
    params = collections.OrderedDict()
    for name, (variable, row) in slots.items():
        value = np.asarray(variable.numpy(), np.float32)
        params[name] = np.ascontiguousarray(from_native(task, name, value if row is None
                                                        else value[row]))
    return params
