"""The CNTK training step and inference loop that every task module shares: a cntk.Trainer
fed one minibatch at a time, and Function.eval for inference (CNTK's inference mode)."""

import collections

import numpy as np

from . import cntk_module

C = cntk_module()


class Model(object):
    """A network with its inputs and, for training, its cntk.Trainer.

    `named` maps every neutral weight name (bench_shared.weights) to the CNTK Parameter or
    Constant holding it: the task modules' slots, whose conversions are reshapes since CNTK's
    layouts are the neutral ones up to shape (convolutions O x I x H x W, dense kernels
    (in, out)).
    `feed` turns a batch of the worker's arrays into what the input variable takes.
    """

    def __init__(
        self, net, x, named, feed=None, learner=None, num_classes=None, loss=None, labels=None
    ):
        self.net, self.x, self.named = net, x, collections.OrderedDict(named)
        self.feed = feed or (lambda batch: np.ascontiguousarray(batch, np.float32))
        self.trainer = None
        if learner is not None:
            self.num_classes = num_classes
            self.y = C.input_variable(num_classes)
            # per example (softmax fused into the loss by default); the Trainer averages it
            # over the minibatch
            loss = (loss or C.cross_entropy_with_softmax)(net, self.y)
            self.trainer = C.Trainer(net, (loss, None), [learner(net.parameters)])
            self.labels = labels or self.one_hot

    def one_hot(self, y):
        return np.eye(self.num_classes, dtype=np.float32)[np.asarray(y)]  # dense one-hot


def same_padding(kernel, padding):
    """CNTK's layers pad "same" (pad=True: (kernel - 1) / 2 on each side of an odd kernel)
    or not at all: SPEC's padding as the flag."""
    if padding not in (0, (kernel - 1) // 2):
        raise ValueError(
            "padding %d around a %dx%d window is not CNTK's pad=True" % (padding, kernel, kernel)
        )
    return padding > 0


def sgd(cfg):
    """SPEC's heavy-ball SGD: v = mu v + g; w -= lr v, g the gradient of the batch-mean loss.

    unit_gain=False: CNTK's default unit-gain momentum scales g by (1 - mu) (the lesson of the
    2018 benchmark, ilkarman/DeepLearningFrameworks).
    learning_parameter_schedule without a reference minibatch size applies lr to the mean
    gradient of each minibatch, like the other frameworks.
    """
    return lambda parameters: C.momentum_sgd(
        parameters,
        C.learning_parameter_schedule(cfg["lr"]),
        C.momentum_schedule(cfg["momentum"]),
        unit_gain=False,
    )


def adam(cfg):
    """SPEC's Adam (bias-corrected). CNTK's Adam applies the *per-sample* learning rate to the
    normalised step m / sqrt(v) (invariant to the gradient's scale), so lr is given per sample:
    learning_parameter_schedule(lr) would divide the step by the batch size."""
    return lambda parameters: C.adam(
        parameters,
        C.learning_parameter_schedule_per_sample(cfg["lr"]),
        C.momentum_schedule(cfg["beta1"]),
        unit_gain=True,
        variance_momentum=C.momentum_schedule(cfg["beta2"]),
        epsilon=cfg["eps"],
    )


def train_epoch(model, batches):
    """One epoch of Trainer.train_minibatch (forward, loss, backward, update); the mean loss."""
    total, steps = 0.0, 0
    for x, y in batches:
        model.trainer.train_minibatch({model.x: model.feed(x), model.y: model.labels(y)})
        total += model.trainer.previous_minibatch_loss_average
        steps += 1
    return total / steps


def predict(model, batches):
    """Function.eval runs in inference mode: dropout off, batch norm on its running statistics."""
    return np.concatenate(
        [np.asarray(model.net.eval({model.x: model.feed(x)}), np.float32) for x in batches]
    )
