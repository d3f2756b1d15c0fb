"""The Theano way every task module shares: symbolic graph -> theano.function, compiled once
in build_model (untimed by the epoch; its seconds recorded apart), then called per batch.

A training function takes (inputs, labels), returns the batch's loss and applies
lasagne.updates' updates to the shared variables in the same call; the prediction function
runs the network with deterministic=True (dropout off, batch norm on running statistics).
Theano caches each compiled C module under base_compiledir (bench_theano: inside the
environment), so a second build of the same graph only re-optimises it.
"""

import time

import numpy as np
import theano
import theano.tensor as T
from lasagne import layers, objectives

from . import compile_seconds


class Model(object):
    """A Lasagne network (its output layer) with its compiled Theano functions."""

    def __init__(self, name, net, input_var, updates=None, input_dtype="float32"):
        self.name, self.net, self.input_dtype = name, net, input_dtype
        self.params = layers.get_all_params(net)  # trainable and not (batch-norm statistics)
        self.predict_fn = self._compile(
            "predict", [input_var], layers.get_output(net, deterministic=True)
        )
        self.train_fn = None
        if updates is not None:
            labels = T.ivector("labels")
            logits = layers.get_output(net)  # dropout on
            # softmax + cross-entropy on integer labels: Theano's optimiser fuses them into
            # one numerically stable op (CrossentropySoftmaxArgmax1HotWithBias)
            loss = objectives.categorical_crossentropy(T.nnet.softmax(logits), labels).mean()
            trainable = layers.get_all_params(net, trainable=True)
            self.train_fn = self._compile(
                "train", [input_var, labels], loss, updates=updates(loss, trainable)
            )

    def _compile(self, what, inputs, outputs, updates=None):
        start = time.perf_counter()
        fn = theano.function(inputs, outputs, updates=updates, name="%s.%s" % (self.name, what))
        compile_seconds["%s.%s" % (self.name, what)] = round(time.perf_counter() - start, 3)
        return fn

    def to_input(self, x):
        return np.asarray(x, dtype=self.input_dtype)


def train_epoch(model, batches):
    """One call of the compiled training function per batch; returns the mean loss. Theano on
    the CPU is synchronous: the returned loss is already on the host."""
    total, steps = 0.0, 0
    for x, y in batches:
        total += float(model.train_fn(model.to_input(x), np.asarray(y, dtype=np.int32)))
        steps += 1
    return total / steps


def predict(model, batches):
    """The compiled deterministic forward pass per batch, float32 on the host."""
    return np.concatenate([model.predict_fn(model.to_input(x)) for x in batches]).astype(
        np.float32, copy=False
    )
