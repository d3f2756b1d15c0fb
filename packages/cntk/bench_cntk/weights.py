"""CNTK's layouts against the neutral ones (bench_shared.weights): the weight protocol's slots
and tensors (bench_shared.slots does the loading, exporting and completeness check).

CNTK's layouts are the neutral ones up to shape: convolution kernels O x I x H x W, dense
kernels (in, out) with the CNN's first one as (C, H, W, out), convolution biases (O, 1, 1),
batch-norm scale/bias/aggregate_mean/aggregate_variance per channel, the embedding
(vocab, dim), the GRU's stacked (in, 3 * units) kernels in the neutral gate order r, z, n (our
GRU step, rnn.py, slices them so). So a conversion is a reshape; which variable holds which
neutral tensor is each model's `named` map. Keys are the variables' uids.
"""

import collections

import numpy as np

from bench_shared import slots as protocol
from bench_shared import weights as neutral

# batch norm's running statistics: Constants, not Parameters (its aggregate_count is neither
# a parameter nor in the neutral format)
RUNNING_STATISTICS = ("aggregate_mean", "aggregate_variance")


def _reshape(shape):
    return lambda value: np.ascontiguousarray(np.reshape(value, shape), np.float32)


def slots(named, task):
    """Neutral name -> the uid of the CNTK Parameter or Constant in `named` holding it (the
    runtime refuses a name `named` lacks or the neutral layout does not know)."""
    layout = neutral.layout(task)
    return collections.OrderedDict(
        (
            name,
            protocol.Slot(
                variable.uid,
                _reshape(variable.shape),
                _reshape(layout[name]) if name in layout else None,
            ),
        )
        for name, variable in named.items()
    )


def _read(variable):
    return np.asarray(variable.value, np.float32)


def _write(variable, value):
    variable.value = value


def tensors(model):
    """Every Parameter of the network and every batch norm's running mean and variance."""
    variables = list(model.net.parameters) + [
        c for c in model.net.constants if c.name in RUNNING_STATISTICS
    ]
    return protocol.DictTensors(
        collections.OrderedDict((v.uid, v) for v in variables), _read, _write
    )
