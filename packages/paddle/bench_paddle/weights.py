"""Neutral weights (bench_shared.weights) <-> Paddle parameters.

The only place where Paddle's layouts meet the neutral ones: paddle.nn.Linear stores its
kernel as (in, out) like the neutral format, paddle.nn.GRU as (3 * units, in), i.e. (out, in);
convolutions are O x I x H x W whatever the data_format; the GRU's gate order is r, z, n (Paddle
calls n "c") like the neutral one; batch norm's gamma/beta/mean/var are weight/bias/_mean/
_variance, all four Paddle parameters (the last two not trainable). With data_format=NHWC the
CNN's flatten runs over H, W, C, so the first dense kernel's rows are permuted from C, H, W.
Loading, exporting and the completeness check are the runtime's (bench_shared.slots).
"""

import collections
import re

import numpy as np
import paddle

from bench_shared import slots as protocol
from bench_shared import weights as neutral

BATCH_NORM = {"gamma": "weight", "beta": "bias", "mean": "_mean", "var": "_variance"}
GRU = {
    "gru.input_weight": "gru.weight_ih_l0",
    "gru.recurrent_weight": "gru.weight_hh_l0",
    "gru.input_bias": "gru.bias_ih_l0",
    "gru.recurrent_bias": "gru.bias_hh_l0",
}
TRANSPOSED = {"gru.input_weight", "gru.recurrent_weight"}  # (out, in) in Paddle's GRU only


def paddle_name(name):
    if name in GRU:
        return GRU[name]
    name = re.sub(r"\.block(\d+)\.", r".\1.", name)  # stage1.block0.conv1 -> stage1.0.conv1
    prefix, field = name.rsplit(".", 1)
    return prefix + "." + BATCH_NORM.get(field, field)


def slots(task, data_format="NCHW"):
    """Neutral name -> the parameter Paddle's layer naming gives it."""
    table = collections.OrderedDict(
        (name, protocol.Slot.whole(paddle_name(name), name in TRANSPOSED))
        for name in neutral.layout(task)
    )
    if task == "cnn" and data_format == "NHWC":
        table["dense1.weight"] = protocol.Slot(
            "dense1.weight", protocol.cnn_flatten_chw_to_hwc, protocol.cnn_flatten_hwc_to_chw
        )
    return table


def _read(tensor):
    return tensor.detach().astype("float32").numpy()


def _write(tensor, value):
    with paddle.no_grad():
        tensor.set_value(value.astype(np.float32))


def tensors(model):
    """Every parameter of the layer (batch norm's statistics included: Paddle keeps them as
    non-trainable parameters), each once: paddle.nn.GRU lists its weights twice in its state
    dict (weight_ih_l0 and 0.cell.weight_ih are one tensor), named_parameters once."""
    return protocol.DictTensors(
        collections.OrderedDict(model.net.named_parameters()), _read, _write
    )
