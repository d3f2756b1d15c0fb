"""GRU sentiment classifier the Paddle way: nn.Embedding + fused nn.GRU (`rnn` op) + Adam."""

import functools

import paddle
from paddle import nn

from bench_shared.spec import RNN

from . import loop, weights


def attr(initializer):
    return paddle.ParamAttr(initializer=initializer)


def orthogonal_per_gate(units):
    """Three orthogonal (units, units) blocks stacked as Paddle's (3 * units, units) kernel: one
    Orthogonal() over the whole kernel would make its columns orthonormal, not each gate."""
    blocks = [
        paddle.create_parameter(
            [units, units], "float32", default_initializer=nn.initializer.Orthogonal()
        )
        for _ in range(3)
    ]
    return paddle.concat(blocks)


class GRUClassifier(nn.Layer):
    def __init__(self):
        super().__init__()
        h, r = RNN.hidden_units, RNN.embedding_init_range
        init = nn.initializer
        self.embedding = nn.Embedding(
            RNN.vocab_size, RNN.embedding_dim, weight_attr=attr(init.Uniform(-r, r))
        )
        # Paddle's GRU is the cuDNN form: gates r, z, c (SPEC's n), biases b_ih and b_hh, the
        # reset gate applied after the recurrent matmul; the fused `rnn` op on CPU and GPU.
        # Glorot-uniform per gate: i.i.d. draws with one gate's fans (in, units) over all three
        self.gru = nn.GRU(
            RNN.embedding_dim,
            h,
            weight_ih_attr=attr(init.XavierUniform(RNN.embedding_dim, h)),
            bias_ih_attr=attr(init.Constant(0.0)),
            bias_hh_attr=attr(init.Constant(0.0)),
        )
        self.gru.weight_hh_l0.set_value(orthogonal_per_gate(h))
        self.dense = nn.Linear(
            RNN.hidden_units,
            RNN.num_classes,
            weight_attr=attr(init.XavierUniform()),
            bias_attr=attr(init.Constant(0.0)),
        )

    def forward(self, tokens):
        _, last = self.gru(self.embedding(tokens))  # zero initial state; last = h at t = 150
        return self.dense(last[-1])


def build_model(run):
    adam = run["task"]["optimizer"]
    # Paddle's Adam puts epsilon on the bias-corrected denominator, as torch's and SPEC's
    optimizer = functools.partial(
        paddle.optimizer.Adam,
        learning_rate=adam["lr"],
        beta1=adam["beta1"],
        beta2=adam["beta2"],
        epsilon=adam["eps"],
    )
    return loop.Model(run, GRUClassifier(), optimizer)


def slots(model):
    return weights.slots("rnn")


train_epoch = loop.train_epoch
predict = loop.predict
