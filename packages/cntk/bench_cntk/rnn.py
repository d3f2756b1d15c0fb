"""GRU sentiment classifier the CNTK way: a GRU step written in CNTK ops folded over the
sequence axis (layers.Fold), cntk.Trainer, Adam. Which GRU ran: the "fold" step below, SPEC's
cuDNN form on the CPU; `optimized_rnnstack` (CNTK's cuDNN GRU) needs a GPU, which this CPU
build has not."""

import numpy as np

from bench_shared import weights as neutral
from bench_shared.spec import RNN

from . import cntk_module, loop, weights

C = cntk_module()
L = C.layers
GRU_IMPLEMENTATION = "fold"  # recorded by the tests; the CPU path


def gru_last_state(units, seed):
    """SPEC's GRU (cuDNN form, reset_after, two bias vectors, gates r, z, n) -> last state.

    CNTK's own layers.GRU differs: it applies the reset gate *before* the recurrent matmul,
    with one bias vector (and gate order z, r, n), so the step is written here from CNTK ops,
    the same way layers.GRU is. The input projection of all steps is one Dense before the loop.
    """
    rng = np.random.RandomState(seed)
    orthogonal = neutral.per_gate(neutral.orthogonal, rng, units)  # gate by gate
    recurrent = C.Parameter(
        (units, 3 * units), name="recurrent_weight", init=orthogonal.astype(np.float32)
    )
    recurrent_bias = C.Parameter((3 * units,), init=0, name="recurrent_bias")

    def step(h, x_proj):
        h_proj = C.times(h, recurrent) + recurrent_bias
        r = C.sigmoid(x_proj[0:units] + h_proj[0:units])
        z = C.sigmoid(x_proj[units : 2 * units] + h_proj[units : 2 * units])
        n = C.tanh(x_proj[2 * units :] + r * h_proj[2 * units :])  # reset after the matmul
        return (1 - z) * n + z * h

    return L.Fold(step), recurrent, recurrent_bias  # zero initial state, the state at t = 150


def build_model(run):
    e, h = RNN.embedding_dim, RNN.hidden_units
    rng = np.random.RandomState(run["seed"])
    # Embedding as a gather from a dense parameter: CNTK's layers.Embedding takes sparse one-hot
    # input, whose sparse gradient CNTK's CPU Adam does not implement ("AdamUpdate -> Feature
    # Not Implemented"). Keras' initialisers, the convention of the 2018 benchmark
    # (ilkarman/DeepLearningFrameworks), spec.RNN.init.
    r = RNN.embedding_init_range
    embedding = C.Parameter(
        (RNN.vocab_size, e),
        name="embedding",
        init=rng.uniform(-r, r, (RNN.vocab_size, e)).astype(np.float32),
    )
    project = L.Dense(3 * h)
    fold, recurrent, recurrent_bias = gru_last_state(h, run["seed"] + 1)
    dense = L.Dense(RNN.num_classes)  # glorot-uniform, zero bias: layers' defaults
    # a sequence of token indices (dynamic sequence axis, all of length 150), as floats: gather's
    # index type; exact for indices below 2**24
    tokens = C.sequence.input_variable(1)
    net = dense(fold(project(C.reshape(C.gather(embedding, tokens), (e,)))))
    # glorot-uniform per gate (layers.Dense's would span all three gates), zero biases
    glorot = neutral.per_gate(neutral.glorot_uniform_kernel, rng, (e, h))
    project.W.value = glorot.astype(np.float32)
    named = [
        ("embedding.weight", embedding),
        ("gru.input_weight", project.W),
        ("gru.recurrent_weight", recurrent),
        ("gru.input_bias", project.b),
        ("gru.recurrent_bias", recurrent_bias),
        ("dense.weight", dense.W),
        ("dense.bias", dense.b),
    ]
    return loop.Model(
        net,
        tokens,
        named,
        feed=feed,
        learner=loop.adam(run["task"]["optimizer"]),
        num_classes=RNN.num_classes,
    )


def feed(tokens):
    """(N, 150) int indices -> (N, 150, 1) float32: N sequences of 150 steps."""
    return np.asarray(tokens, np.float32)[..., None]


def slots(model):
    return weights.slots(model.named, "rnn")


train_epoch = loop.train_epoch
predict = loop.predict
