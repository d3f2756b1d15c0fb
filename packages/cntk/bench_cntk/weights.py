"""Neutral weights (bench_shared.weights) <-> CNTK parameters.

CNTK's layouts are the neutral ones up to shape: convolution kernels O x I x H x W, dense
kernels (in, out) with the CNN's first one as (C, H, W, out), convolution biases (O, 1, 1),
batch-norm scale/bias/aggregate_mean/aggregate_variance per channel, the embedding
(vocab, dim), the GRU's stacked (in, 3 * units) kernels in the neutral gate order r, z, n (our
GRU step, rnn.py, slices them so). So a conversion is a reshape; the names live in each
model's `named` map.
"""
import collections

import numpy as np

from bench_shared import weights as neutral


def load(model, params):
    """Copy neutral weights into the model; every tensor must be used exactly once."""
    missing = [n for n in model.named if n not in params]
    unexpected = [n for n in params if n not in model.named]
    if missing or unexpected:
        raise ValueError("neutral weights do not fit the CNTK model: missing %s, unexpected %s"
                         % (missing[:5], unexpected[:5]))
    for name, variable in model.named.items():
        value = np.asarray(params[name], np.float32)
        if value.size != int(np.prod(variable.shape)):
            raise ValueError("%s: neutral shape %s does not fit CNTK's %s"
                             % (name, value.shape, variable.shape))
        variable.value = np.ascontiguousarray(value.reshape(variable.shape))


def export(model, task):
    """Neutral float32 arrays, in the order of bench_shared.weights.layout(task)."""
    return collections.OrderedDict(
        (name, np.asarray(model.named[name].value, np.float32).reshape(shape))
        for name, shape in neutral.layout(task).items())
