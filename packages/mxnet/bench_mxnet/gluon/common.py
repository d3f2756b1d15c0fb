"""The Gluon training step and inference loop that every task module shares."""
import mxnet as mx
import numpy as np
from mxnet import autograd, gluon

from bench_mxnet import runtime
from bench_mxnet.gluon import options


class Model(object):
    """A HybridBlock with what it runs with: context, loss, trainer, hybridisation."""

    def __init__(self, net, input_shape, optimizer=None, optimizer_params=None, spec_excluded=()):
        self.ctx = runtime.context()
        self.net = net
        net.initialize(ctx=self.ctx)  # each layer's own initialiser (SPEC's, set in the task)
        # materialise deferred shapes (the model zoo infers in_channels) before anything else
        net(mx.nd.zeros((1,) + input_shape, ctx=self.ctx))
        self.spec_excluded = set(spec_excluded)
        self.hybridized = bool(options()["hybridize"])
        if self.hybridized:  # one cached static graph, memory planned once (MXNet's fast path)
            net.hybridize(static_alloc=True, static_shape=True)
        self.loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()  # softmax fused into the loss
        self.trainer = None
        if optimizer:
            self.trainer = gluon.Trainer(net.collect_params(), optimizer, optimizer_params)
        self.fp16 = runtime.precision() == "fp16"
        if self.fp16 and self.trainer:  # fp16 gradients underflow without loss scaling
            from mxnet.contrib import amp

            amp.init_trainer(self.trainer)

    def to_device(self, array):
        return mx.nd.array(array, ctx=self.ctx, dtype=np.float32)


def backward(model, loss):
    if model.fp16:
        from mxnet.contrib import amp

        with amp.scale_loss(loss, model.trainer) as scaled:
            autograd.backward(scaled)
    else:
        loss.backward()


def train_epoch(model, batches):
    """One epoch of forward, loss, backward and Trainer step; returns the mean loss.

    MXNet's engine is asynchronous: the loss is summed on the device and read once at the end
    (asnumpy() per step would stall the engine every batch)."""
    total, steps = mx.nd.zeros((1,), ctx=model.ctx), 0
    for x, y in batches:
        x, y = model.to_device(x), model.to_device(y)
        with autograd.record():  # train mode: dropout on
            loss = model.loss_fn(model.net(x), y)
        backward(model, loss)
        model.trainer.step(x.shape[0])  # gradients of the summed loss / batch = batch mean
        total += loss.mean().astype(np.float32)
        steps += 1
    return float(total.asscalar()) / steps


def predict(model, batches):
    """Outputs for every batch in inference mode (dropout off, batch norm's running
    statistics), copied to host memory as float32 once all batches are queued."""
    outputs = [model.net(model.to_device(x)) for x in batches]
    return np.concatenate([out.astype(np.float32).asnumpy() for out in outputs])
