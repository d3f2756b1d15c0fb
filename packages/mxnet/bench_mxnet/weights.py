"""Where the neutral weights (bench_shared.weights) live in MXNet models, for both API styles.

The only place where MXNet's layouts meet the neutral ones: FullyConnected / Dense and the
fused RNN operator store kernels as (out, in), the neutral format as (in, out); convolutions
are O x I x H x W in both; the RNN operator's GRU gates are r, z, n (cuDNN's order and
reset-after form) like the neutral ones. Gluon holds one Parameter per tensor; the Module API's
symbols name them `<layer>_weight`, batch norm's running statistics are auxiliary states
`<bn>_moving_mean` / `_moving_var`, and the fused GRU is one packed `gru_parameters` vector:
[input weights (3H, E), recurrent weights (3H, H), input bias (3H), recurrent bias (3H)].
Loading, exporting and the completeness check are the runtime's (bench_shared.slots).

Nothing here imports mxnet at import time: the packages' tensors() come from here, and MXNet
must not load before setup() has set its thread variables (bench_mxnet.runtime).
"""

import collections

import numpy as np

from bench_shared import slots as protocol
from bench_shared import weights as neutral

# (in, out) in the neutral format, (out, in) in MXNet
TRANSPOSED = {
    "dense1.weight",
    "dense2.weight",
    "dense.weight",
    "gru.input_weight",
    "gru.recurrent_weight",
    "classifier.weight",
}
GRU_PACKED = ("gru.input_weight", "gru.recurrent_weight", "gru.input_bias", "gru.recurrent_bias")
AUX = {"mean": "moving_mean", "var": "moving_var"}  # batch norm's auxiliary states


def slot(name, key):
    """The slot of a neutral tensor held whole by the native tensor `key`."""
    return protocol.Slot.whole(key, name in TRANSPOSED)


# --- Gluon: one Parameter per neutral tensor, keyed by its name ---


def _read_parameter(parameter):
    # the first context's copy: with several (devices=N), the one inference runs on
    return parameter.data(parameter.list_ctx()[0]).asnumpy()


def _write_parameter(parameter, value):
    import mxnet as mx

    parameter.set_data(mx.nd.array(value))


def gluon_tensors(parameters):
    """parameters: an ordered mapping of Gluon Parameters by name (collect_params())."""
    return protocol.DictTensors(parameters, _read_parameter, _write_parameter)


# --- Module API: arg_params / aux_params named after the symbol's variables ---


def symbol_name(name):
    prefix, field = name.rsplit(".", 1)
    return prefix.replace(".", "_") + "_" + AUX.get(field, field)


def _packed_slot(shape, transposed, part):
    """A GRU tensor's part of the flat vector: the native (out, in) matrix, raveled."""

    def to_native(value):
        return np.ravel(value.T if transposed else value)

    def from_native(flat):
        value = np.reshape(flat, shape)
        return value.T if transposed else value

    return protocol.Slot("gru_parameters", to_native, from_native, part)


def packed_gru_slots(layout):
    """The four GRU tensors in FusedRNNCell's one `gru_parameters` vector, in its order."""
    table, offset = collections.OrderedDict(), 0
    for name in GRU_PACKED:
        transposed = name in TRANSPOSED
        shape = tuple(layout[name][::-1]) if transposed else tuple(layout[name])
        size = int(np.prod(shape))
        table[name] = _packed_slot(shape, transposed, slice(offset, offset + size))
        offset += size
    return table


def module_slots(task):
    """Neutral name -> the Module's arg/aux parameter (the packed vector's part for the GRU)."""
    layout = neutral.layout(task)
    packed = packed_gru_slots(layout) if GRU_PACKED[0] in layout else {}
    return collections.OrderedDict(
        (name, packed[name] if name in packed else slot(name, symbol_name(name))) for name in layout
    )


class ModuleTensors(protocol.Tensors):
    """A bound Module's arg_params and aux_params. Writes are buffered and applied together
    by commit(): Module.set_params replaces every parameter at once."""

    def __init__(self, mod):
        self.mod, self.pending = mod, {}

    def _params(self):
        arg_params, aux_params = self.mod.get_params()  # synced from the executors
        return arg_params, aux_params

    def keys(self):
        arg_params, aux_params = self._params()
        return list(arg_params) + list(aux_params)

    def read(self, key):
        if key in self.pending:
            return self.pending[key]
        arg_params, aux_params = self._params()
        return (arg_params[key] if key in arg_params else aux_params[key]).asnumpy()

    def write(self, key, value):
        self.pending[key] = np.array(value, np.float32)

    def commit(self):
        if not self.pending:
            return
        import mxnet as mx

        arg_params, aux_params = self._params()

        def updated(params):
            return {
                k: mx.nd.array(self.pending[k]) if k in self.pending else v
                for k, v in params.items()
            }

        self.mod.set_params(
            updated(arg_params), updated(aux_params), allow_missing=False, force_init=True
        )
        self.pending.clear()
