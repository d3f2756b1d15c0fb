"""Neutral weights (bench_shared.weights) <-> Keras layer variables, on every Keras backend.

Keras' layer layouts are the same on TensorFlow, JAX and PyTorch. Where they differ from the
neutral format: convolution kernels are H x W x I x O (neutral O x I x H x W); the CNN's
flatten runs over NHWC, so the first dense kernel's rows are permuted from C, H, W to H, W, C
order; Keras' GRU orders its gates z, r, n (neutral r, z, n) and stacks its two bias vectors
into one (2, 3*units) variable (one slot per row); batch norm's statistics are moving_mean and
moving_variance. Dense kernels are (in, out) in both. Native tensors are keyed by their
variable paths, read with keras.ops.convert_to_numpy and written with Variable.assign (both
backend-neutral). Loading, exporting and the completeness check are the runtime's
(bench_shared.slots). Used by bench_keras and bench_tensorflow alike.
"""

import collections

import keras

from bench_shared import slots as protocol
from bench_shared import weights as neutral


def conversions(task, name):
    """(to_native, from_native) of one neutral tensor."""
    if len(neutral.layout(task)[name]) == 4:
        return protocol.conv_oihw_to_hwio, protocol.conv_hwio_to_oihw
    if task == "cnn" and name == "dense1.weight":
        return protocol.cnn_flatten_chw_to_hwc, protocol.cnn_flatten_hwc_to_chw
    if name.startswith("gru."):
        return protocol.swap_first_two_gates, protocol.swap_first_two_gates
    return protocol.identity, protocol.identity


def slots(task, places):
    """places: (neutral name, variable[, part]) in the neutral order -> the task's slots,
    keyed by variable path; part indexes a stacked variable (the GRU's two biases)."""
    table = collections.OrderedDict()
    for place in places:
        name, variable, part = (tuple(place) + (None,))[:3]
        to_native, from_native = conversions(task, name)
        table[name] = protocol.Slot(variable.path, to_native, from_native, part)
    return table


def batch_norm_places(prefix, layer):
    """A Keras BatchNormalization's four tensors as slots' places (gamma, beta, mean, var)."""
    return [
        (prefix + ".gamma", layer.gamma),
        (prefix + ".beta", layer.beta),
        (prefix + ".mean", layer.moving_mean),
        (prefix + ".var", layer.moving_variance),
    ]


def _read(variable):
    # through a tensor copy: numpy 2 warns when handed a TensorFlow or Keras variable itself
    return keras.ops.convert_to_numpy(keras.ops.copy(variable))


def _assign(variable, value):
    variable.assign(value)


def variable_tensors(variables, excluded=()):
    """The variables the neutral weights fill, keyed by path (parameters and batch-norm
    moving statistics; not `excluded` paths, tensors SPEC's model lacks)."""
    table = collections.OrderedDict()
    for variable in variables:
        if variable.path in excluded:
            continue
        if variable.path in table:
            raise ValueError("two variables of the model share the path %r" % variable.path)
        table[variable.path] = variable
    return protocol.DictTensors(table, _read, _assign)
