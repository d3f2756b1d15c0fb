"""Neutral weights (bench_shared.weights) <-> PyTorch state dicts.

The only place where PyTorch's layouts meet the neutral ones: nn.Linear and nn.GRU store
kernels as (out, in), the neutral format as (in, out); convolutions are O x I x H x W in both;
PyTorch's GRU gate order is r, z, n like the neutral one; batch norm's gamma/beta/mean/var are
weight/bias/running_mean/running_var. Loading, exporting and the completeness check are the
runtime's (bench_shared.slots).
"""

import collections
import re

import torch

from bench_shared import slots as protocol
from bench_shared import weights as neutral

BATCH_NORM = {"gamma": "weight", "beta": "bias", "mean": "running_mean", "var": "running_var"}
GRU = {
    "gru.input_weight": "gru.weight_ih_l0",
    "gru.recurrent_weight": "gru.weight_hh_l0",
    "gru.input_bias": "gru.bias_ih_l0",
    "gru.recurrent_bias": "gru.bias_hh_l0",
}
# (in, out) in the neutral format, (out, in) in PyTorch
TRANSPOSED = {
    "dense1.weight",
    "dense2.weight",
    "dense.weight",
    "gru.input_weight",
    "gru.recurrent_weight",
    "classifier.weight",
}


def torch_name(name):
    if name in GRU:
        return GRU[name]
    name = re.sub(r"\.block(\d+)\.", r".\1.", name)  # stage1.block0.conv1 -> stage1.0.conv1
    prefix, field = name.rsplit(".", 1)
    return prefix + "." + BATCH_NORM.get(field, field)


def slots(task):
    """Neutral name -> the state-dict entry PyTorch's module naming gives it."""
    return collections.OrderedDict(
        (name, protocol.Slot.whole(torch_name(name), name in TRANSPOSED))
        for name in neutral.layout(task)
    )


def _read(tensor):
    return tensor.detach().float().cpu().numpy()


def _write(tensor, value):
    with torch.no_grad():
        tensor.copy_(torch.from_numpy(value))


def tensors(model):
    """Every entry of the state dict (parameters and batch-norm statistics) but the
    batch-norm step counters, which the neutral format does not hold."""
    state = model.net.state_dict(keep_vars=True)
    return protocol.DictTensors(
        collections.OrderedDict(
            (k, v) for k, v in state.items() if not k.endswith("num_batches_tracked")
        ),
        _read,
        _write,
    )
