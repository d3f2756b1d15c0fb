"""GRU sentiment classifier the Gluon way: nn.Embedding + fused rnn.GRU (NTC, cuDNN on GPU)
+ nn.Dense in a HybridBlock, hybridised, Adam."""

import collections

from mxnet.gluon import nn, rnn

from bench_mxnet import initialisers, weights
from bench_mxnet.gluon import loop
from bench_shared.spec import RNN


class GRUClassifier(nn.HybridBlock):
    def __init__(self, **kwargs):
        super(GRUClassifier, self).__init__(**kwargs)
        with self.name_scope():
            self.embedding = nn.Embedding(
                RNN.vocab_size, RNN.embedding_dim, weight_initializer=initialisers.EMBEDDING
            )
            # MXNet's fused RNN operator is the cuDNN form: gates r, z, n, two bias vectors
            # (reset after the recurrent matmul); batch-first via layout="NTC"
            self.gru = rnn.GRU(
                RNN.hidden_units,
                layout="NTC",
                input_size=RNN.embedding_dim,
                i2h_weight_initializer=initialisers.PerGate(initialisers.GLOROT_UNIFORM),
                h2h_weight_initializer=initialisers.PerGate(initialisers.ORTHOGONAL),
            )
            self.dense = nn.Dense(
                RNN.num_classes,
                in_units=RNN.hidden_units,
                weight_initializer=initialisers.GLOROT_UNIFORM,
            )

    def hybrid_forward(self, F, tokens):
        outputs = self.gru(self.embedding(tokens))  # zero initial state: (N, T, H)
        last = F.squeeze(F.slice_axis(outputs, axis=1, begin=-1, end=None), axis=1)  # t = 150
        return self.dense(last)


def build_model(run):
    adam = run["task"]["optimizer"]
    return loop.Model(
        GRUClassifier(),
        (RNN.seq_len,),
        "adam",
        {
            "learning_rate": adam["lr"],
            "beta1": adam["beta1"],
            "beta2": adam["beta2"],
            "epsilon": adam["eps"],
        },
    )


def slots(model):
    """Neutral name -> the Gluon Parameter's name (prefixed with the block's counter)."""
    net = model.net
    parameters = [
        ("embedding.weight", net.embedding.weight),
        ("gru.input_weight", net.gru.l0_i2h_weight),
        ("gru.recurrent_weight", net.gru.l0_h2h_weight),
        ("gru.input_bias", net.gru.l0_i2h_bias),
        ("gru.recurrent_bias", net.gru.l0_h2h_bias),
        ("dense.weight", net.dense.weight),
        ("dense.bias", net.dense.bias),
    ]
    return collections.OrderedDict(
        (name, weights.slot(name, parameter.name)) for name, parameter in parameters
    )


train_epoch = loop.train_epoch
predict = loop.predict
