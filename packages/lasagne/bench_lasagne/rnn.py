"""GRU sentiment classifier the Lasagne way: EmbeddingLayer + SPEC's cuDNN-form GRU (a small
Lasagne layer over theano.scan: bench_lasagne.layers.GRULayer) + DenseLayer, updates.adam."""

import functools

import theano.tensor as T
from lasagne import init, layers, nonlinearities, updates

from bench_shared.spec import RNN

from . import loop, weights
from .layers import GRULayer


def build_model(run):
    tokens = T.imatrix("tokens")
    net = layers.InputLayer((None, RNN.seq_len), tokens, name="input")
    net = layers.EmbeddingLayer(
        net,
        RNN.vocab_size,
        RNN.embedding_dim,
        W=init.Uniform(RNN.embedding_init_range),
        name="embedding",
    )
    # lasagne.layers.GRULayer has no recurrent bias: SPEC's form is bench_lasagne's own layer
    net = GRULayer(net, RNN.hidden_units, name="gru")  # zero initial state, last time step
    net = layers.DenseLayer(
        net,
        RNN.num_classes,
        W=init.GlorotUniform(),
        b=init.Constant(0.0),
        nonlinearity=nonlinearities.identity,
        name="dense",
    )
    adam = run["task"]["optimizer"]
    # lasagne.updates.adam folds both bias corrections into the step size: lr_t m / (sqrt(v)
    # + eps), lr_t = lr sqrt(1 - beta2^t) / (1 - beta1^t) -- PyTorch's form with eps scaled
    # by sqrt(1 - beta2^t) (Keras 2's and TensorFlow's form); the same steps but for eps
    optimizer = functools.partial(
        updates.adam,
        learning_rate=adam["lr"],
        beta1=adam["beta1"],
        beta2=adam["beta2"],
        epsilon=adam["eps"],
    )
    return loop.Model("rnn", net, tokens, optimizer, input_dtype="int32")


def slots(model):
    return weights.slots("rnn")


train_epoch = loop.train_epoch
predict = loop.predict
