"""The Gluon training step, inference loop and int8 calibration that the task modules share."""

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon

from bench_mxnet import runtime
from bench_mxnet.gluon import options


class Model(object):
    """A HybridBlock with what it runs with: contexts, loss, trainer, hybridisation.

    contexts: more than one trains data-parallel: the parameters are initialised on every
    context, each batch is split over them (train_epoch) and the Trainer's kvstore
    (runtime.kvstore()) sums their gradients before each context applies the same update.
    Inference runs on the first context alone."""

    def __init__(
        self,
        net,
        input_shape,
        optimizer=None,
        optimizer_params=None,
        spec_excluded=(),
        loss_fn=None,
        contexts=None,
    ):
        self.ctxs = contexts or [runtime.context()]
        self.ctx = self.ctxs[0]
        self.net = net
        # each layer's own initialiser (SPEC's, set in the task): drawn once, copied to every
        # context
        net.initialize(ctx=self.ctxs)
        # materialise deferred shapes (the model zoo infers in_channels) before anything else
        net(mx.nd.zeros((1,) + input_shape, ctx=self.ctx))
        self.spec_excluded = set(spec_excluded)
        self.hybridized = bool(options()["hybridize"])
        if self.hybridized:  # one cached static graph, memory planned once (MXNet's fast path)
            net.hybridize(static_alloc=True, static_shape=True)
        # softmax fused into the loss (multi-label tasks: sigmoid + BCE, given)
        self.loss_fn = loss_fn or gluon.loss.SoftmaxCrossEntropyLoss()
        self.trainer = None
        if optimizer:
            self.trainer = gluon.Trainer(
                net.collect_params(), optimizer, optimizer_params, kvstore=runtime.kvstore()
            )
        self.fp16 = runtime.precision() == "fp16"
        if self.fp16 and self.trainer:  # fp16 gradients underflow without loss scaling
            from mxnet.contrib import amp

            amp.init_trainer(self.trainer)

    def to_device(self, array):
        return mx.nd.array(array, ctx=self.ctx, dtype=np.float32)


def backward(model, losses):
    """Backpropagates every context's loss (a list: one per context)."""
    if model.fp16:
        from mxnet.contrib import amp

        with amp.scale_loss(losses, model.trainer) as scaled:
            autograd.backward(scaled)
    else:
        autograd.backward(losses)


def train_epoch(model, batches):
    """One epoch of forward, loss, backward and Trainer step; returns the mean loss.

    Each batch is split over the model's contexts (gluon.utils.split_and_load; one context:
    the whole batch), and every context's loss is backpropagated; the Trainer sums the
    gradients over the contexts (its kvstore) and divides by the whole batch. MXNet's engine
    is asynchronous: the loss is summed on the device and read once at the end (asnumpy() per
    step would stall the engine every batch)."""
    total, steps = mx.nd.zeros((1,), ctx=model.ctx), 0
    for x, y in batches:
        xs = gluon.utils.split_and_load(np.asarray(x, np.float32), model.ctxs)
        ys = gluon.utils.split_and_load(np.asarray(y, np.float32), model.ctxs)
        with autograd.record():  # train mode: dropout on, batch norm on batch statistics
            losses = [model.loss_fn(model.net(a), b) for a, b in zip(xs, ys)]
        backward(model, losses)
        model.trainer.step(len(x))  # gradients of the summed loss / batch = batch mean
        for loss in losses:
            total += loss.sum().astype(np.float32).as_in_context(model.ctx) / len(x)
        steps += 1
    keep_first_context_statistics(model)
    return float(total.asscalar()) / steps


def keep_first_context_statistics(model):
    """Batch norm's running statistics are no gradients: each context updates its own from
    its share of the batches, and no kvstore sums them. The first context's are the model's
    (inference runs there; weights are read from there), and are copied to the others once
    per epoch, as DistributedDataParallel broadcasts rank 0's buffers."""
    if len(model.ctxs) == 1:
        return
    for parameter in model.net.collect_params().values():
        if parameter.grad_req == "null":
            first = parameter.data(model.ctx)
            for ctx in model.ctxs[1:]:
                first.copyto(parameter.data(ctx))


def predict(model, batches):
    """Outputs for every batch in inference mode (dropout off, batch norm's running
    statistics), copied to host memory as float32 once all batches are queued."""
    outputs = [model.net(model.to_device(x)) for x in batches]
    return np.concatenate([out.astype(np.float32).asnumpy() for out in outputs])


def calibrate(model, batches):
    """precision=int8: MXNet's oneDNN post-training quantization of a Gluon network,
    contrib.quantization.quantize_net_v2: convolutions and their fused batch norm, ReLU and
    residual sum in int8 (uint8 after a ReLU, quantized_dtype "auto"), activation ranges from
    `batches` (calib_mode "naive": the minimum and maximum seen); the quantized SymbolBlock,
    hybridised, replaces the network."""
    import logging

    from mxnet.contrib import quantization

    images = np.concatenate([np.asarray(x, np.float32) for x in batches])
    quantized = quantization.quantize_net_v2(
        model.net,
        quantized_dtype="auto",
        calib_mode="naive",
        ctx=model.ctx,
        calib_data=mx.io.NDArrayIter(data=images, batch_size=len(batches[0])),
        num_calib_examples=len(images),
        logger=logging.getLogger("bench_mxnet.calibrate"),
    )
    if model.hybridized:
        quantized.hybridize(static_alloc=True, static_shape=True)
    model.net = quantized
    return model
