"""GRU sentiment classifier the Chainer way: L.EmbedID + L.NStepGRU (cuDNN on GPU) + L.Linear,
trained with Adam."""

import chainer
import chainer.functions as F
import chainer.links as L
from chainer import initializers, optimizers

from bench_shared.spec import RNN

from . import loop, weights


class GRUClassifier(chainer.Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.embedding = L.EmbedID(
                RNN.vocab_size,
                RNN.embedding_dim,
                initialW=initializers.Uniform(RNN.embedding_init_range),
            )
            # NStepGRU is the cuDNN form: r, z, n with two biases per gate (b0..b2 on the input
            # side, b3..b5 on the recurrent side; reset applied after the recurrent matmul)
            self.gru = L.NStepGRU(1, RNN.embedding_dim, RNN.hidden_units, dropout=0.0)
            self.dense = L.Linear(
                RNN.hidden_units, RNN.num_classes, initialW=initializers.GlorotUniform()
            )
        # Keras' initialisers, the 2018 benchmark's (ilkarman/DeepLearningFrameworks) convention
        # (spec.RNN.init), gate by gate
        layer = self.gru[0]
        for g in range(3):
            initializers.GlorotUniform()(getattr(layer, "w%d" % g).array)
            initializers.Orthogonal(scale=1.0)(getattr(layer, "w%d" % (g + 3)).array)

    def forward(self, tokens):
        # NStepGRU takes a list of sequences (any lengths); SPEC's are all 150 tokens long
        xs = F.separate(self.embedding(tokens), axis=0)
        last, _ = self.gru(None, list(xs))  # zero initial state; last: (layers, N, units)
        return self.dense(last[-1])


def build_model(run):
    adam = run["task"]["optimizer"]
    # Chainer's Adam folds the bias corrections into the step size, so its eps acts as
    # eps / sqrt(1 - beta2^t) in the reference's form: a ~1e-7 difference, far below the
    # gradients here
    optimizer = optimizers.Adam(
        alpha=adam["lr"], beta1=adam["beta1"], beta2=adam["beta2"], eps=adam["eps"]
    )
    return loop.Model(run, GRUClassifier(), optimizer)


def slots(model):
    return weights.slots("rnn")


train_epoch = loop.train_epoch
predict = loop.predict
