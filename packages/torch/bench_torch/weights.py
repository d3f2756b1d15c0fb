"""Neutral weights (bench_shared.weights) <-> PyTorch state dicts.

The only place where PyTorch's layouts meet the neutral ones: nn.Linear and nn.GRU store
kernels as (out, in), the neutral format as (in, out); convolutions are O x I x H x W in both;
PyTorch's GRU gate order is r, z, n like the neutral one; batch norm's gamma/beta/mean/var are
weight/bias/running_mean/running_var.
"""
import collections
import re

import numpy as np
import torch

BATCH_NORM = {"gamma": "weight", "beta": "bias", "mean": "running_mean", "var": "running_var"}
GRU = {"gru.input_weight": "gru.weight_ih_l0", "gru.recurrent_weight": "gru.weight_hh_l0",
       "gru.input_bias": "gru.bias_ih_l0", "gru.recurrent_bias": "gru.bias_hh_l0"}
# (in, out) in the neutral format, (out, in) in PyTorch
TRANSPOSED = {"dense1.weight", "dense2.weight", "dense.weight", "gru.input_weight",
              "gru.recurrent_weight"}


def torch_name(name):
    if name in GRU:
        return GRU[name]
    name = re.sub(r"\.block(\d+)\.", r".\1.", name)  # stage1.block0.conv1 -> stage1.0.conv1
    prefix, field = name.rsplit(".", 1)
    return prefix + "." + BATCH_NORM.get(field, field)


def to_state_dict(params):
    return collections.OrderedDict(
        (torch_name(name), torch.from_numpy(np.ascontiguousarray(
            value.T if name in TRANSPOSED else value)))
        for name, value in params.items())


def from_state_dict(state, layout):
    """Neutral float32 arrays, in the order of `layout` (bench_shared.weights.layout(task))."""
    params = collections.OrderedDict()
    for name in layout:
        value = state[torch_name(name)].detach().float().cpu().numpy()
        params[name] = np.ascontiguousarray(value.T if name in TRANSPOSED else value)
    return params


def load(model, params):
    """Copy neutral weights into model.net; every tensor must be used exactly once."""
    missing, unexpected = model.net.load_state_dict(to_state_dict(params), strict=False)
    missing = [k for k in missing if not k.endswith("num_batches_tracked")]
    if missing or unexpected:
        raise ValueError("neutral weights do not fit the PyTorch model: missing %s, unexpected %s"
                         % (missing[:5], unexpected[:5]))
