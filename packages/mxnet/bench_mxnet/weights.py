"""Neutral weights (bench_shared.weights) <-> MXNet parameters, for both API styles.

The only place where MXNet's layouts meet the neutral ones: FullyConnected / Dense and the
fused RNN operator store kernels as (out, in), the neutral format as (in, out); convolutions
are O x I x H x W in both; the RNN operator's GRU gates are r, z, n (cuDNN's order and
reset-after form) like the neutral ones. Gluon holds one Parameter per tensor; the Module API's
symbols name them `<layer>_weight`, batch norm's running statistics are auxiliary states
`<bn>_moving_mean` / `_moving_var`, and the fused GRU is one packed `gru_parameters` vector:
[input weights (3H, E), recurrent weights (3H, H), input bias (3H), recurrent bias (3H)].
"""
import collections

import mxnet as mx
import numpy as np

# (in, out) in the neutral format, (out, in) in MXNet
TRANSPOSED = {"dense1.weight", "dense2.weight", "dense.weight", "gru.input_weight",
              "gru.recurrent_weight"}
GRU_PACKED = ("gru.input_weight", "gru.recurrent_weight", "gru.input_bias", "gru.recurrent_bias")
AUX = {"mean": "moving_mean", "var": "moving_var"}  # batch norm's auxiliary states


def to_mxnet(name, value):
    return np.ascontiguousarray(value.T if name in TRANSPOSED else value, np.float32)


def from_mxnet(name, value):
    return np.ascontiguousarray(value.T if name in TRANSPOSED else value, np.float32)


# --- Gluon: one Parameter per neutral tensor (each task module lists its slots) ---

def load_parameters(slots, params):
    """Copy neutral weights into Gluon Parameters; every tensor must be used exactly once."""
    if set(slots) != set(params):
        raise ValueError("neutral weights do not fit the Gluon model: missing %s, unexpected %s"
                         % (sorted(set(slots) - set(params))[:5],
                            sorted(set(params) - set(slots))[:5]))
    for name, parameter in slots.items():
        value = to_mxnet(name, params[name])
        if value.shape != parameter.shape:
            raise ValueError("%s: neutral shape %s does not fit %s %s"
                             % (name, value.shape, parameter.name, parameter.shape))
        parameter.set_data(mx.nd.array(value))


def export_parameters(slots):
    """Neutral float32 arrays in the slots' order (the neutral layout's)."""
    return collections.OrderedDict((name, from_mxnet(name, p.data().asnumpy()))
                                   for name, p in slots.items())


# --- Module API: arg_params / aux_params named after the symbol's variables ---

def symbol_name(name):
    prefix, field = name.rsplit(".", 1)
    return prefix.replace(".", "_") + "_" + AUX.get(field, field)


def pack_gru(params):
    return np.concatenate([to_mxnet(n, params[n]).ravel() for n in GRU_PACKED])


def unpack_gru(vector, layout):
    params, offset = collections.OrderedDict(), 0
    for name in GRU_PACKED:
        shape = layout[name][::-1] if name in TRANSPOSED else layout[name]
        size = int(np.prod(shape))
        params[name] = from_mxnet(name, vector[offset:offset + size].reshape(shape))
        offset += size
    if offset != vector.size:
        raise ValueError("gru_parameters has %d values, the neutral GRU %d" % (vector.size, offset))
    return params


def to_module_params(params):
    """(arg_params, aux_params) for Module.set_params."""
    arg, aux = {}, {}
    for name, value in params.items():
        if name in GRU_PACKED:
            continue
        target = aux if name.rsplit(".", 1)[1] in AUX else arg
        target[symbol_name(name)] = mx.nd.array(to_mxnet(name, value))
    if GRU_PACKED[0] in params:
        arg["gru_parameters"] = mx.nd.array(pack_gru(params))
    return arg, aux


def from_module_params(arg, aux, layout):
    """Neutral float32 arrays, in the order of `layout` (bench_shared.weights.layout(task))."""
    both = dict(arg, **aux)
    gru = unpack_gru(both["gru_parameters"].asnumpy(), layout) if "gru_parameters" in both else {}
    return collections.OrderedDict(
        (name, gru[name] if name in gru else from_mxnet(name, both[symbol_name(name)].asnumpy()))
        for name in layout)
