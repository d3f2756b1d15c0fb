"""Neutral weights (bench_shared.weights) <-> Keras 2 layer variables, on both backends.

Keras 2's layer layouts are Keras 3's, and the same on CNTK and Theano: convolution kernels
are H x W x I x O (neutral O x I x H x W) whatever image_data_format says; Keras' GRU orders
its gates z, r, n (neutral r, z, n) and stacks its two bias vectors into one (2, 3*units)
variable (one slot per row); batch norm's statistics are moving_mean and moving_variance; dense
kernels are (in, out) in both. On Theano a Keras 2 kernel is also flipped in H and W: Keras'
Theano backend calls T.nnet.conv2d with its default filter_flip=True, a true convolution,
where CNTK (and TensorFlow, and SPEC) cross-correlate (Keras 2 shipped
keras.utils.convert_all_kernels_in_model to move weights between the two). Unlike Keras 3
(NHWC) the CNN's flatten keeps the neutral C, H, W row order (cnn.py). Native tensors are
keyed by their variable names, read with K.get_value and written with K.set_value (both
backend-neutral). Loading, exporting and the completeness check are the runtime's
(bench_shared.slots).
"""

import collections

import numpy as np
from keras import backend as K

from bench_shared import slots as protocol
from bench_shared import weights as neutral


def conv_oihw_to_flipped_hwio(kernel):
    """Neutral O x I x H x W -> H x W x I x O, flipped in H and W (Theano's true convolution)."""
    return np.ascontiguousarray(protocol.conv_oihw_to_hwio(kernel)[::-1, ::-1])


def conv_flipped_hwio_to_oihw(kernel):
    return protocol.conv_hwio_to_oihw(np.asarray(kernel)[::-1, ::-1])


def conversions(task, name):
    """(to_native, from_native) of one neutral tensor."""
    if len(neutral.layout(task)[name]) == 4:
        if K.backend() == "theano":
            return conv_oihw_to_flipped_hwio, conv_flipped_hwio_to_oihw
        return protocol.conv_oihw_to_hwio, protocol.conv_hwio_to_oihw
    if name.startswith("gru."):
        return protocol.swap_first_two_gates, protocol.swap_first_two_gates
    return protocol.identity, protocol.identity


def slots(task, places):
    """places: (neutral name, variable[, part]) in the neutral order -> the task's slots,
    keyed by variable name; part indexes a stacked variable (the GRU's two biases)."""
    table = collections.OrderedDict()
    for place in places:
        name, variable, part = (tuple(place) + (None,))[:3]
        to_native, from_native = conversions(task, name)
        table[name] = protocol.Slot(variable.name, to_native, from_native, part)
    return table


def batch_norm_places(prefix, layer):
    """A Keras BatchNormalization's four tensors as slots' places (gamma, beta, mean, var)."""
    return [
        (prefix + ".gamma", layer.gamma),
        (prefix + ".beta", layer.beta),
        (prefix + ".mean", layer.moving_mean),
        (prefix + ".var", layer.moving_variance),
    ]


def _assign(variable, value):
    K.set_value(variable, np.asarray(value, np.float32))


def variable_tensors(variables, excluded=()):
    """The variables the neutral weights fill, keyed by name (parameters and batch-norm
    moving statistics; not `excluded` names, tensors SPEC's model lacks)."""
    table = collections.OrderedDict()
    for variable in variables:
        if variable.name in excluded:
            continue
        if variable.name in table:
            raise ValueError("two variables of the model share the name %r" % variable.name)
        table[variable.name] = variable
    return protocol.DictTensors(table, K.get_value, _assign)
