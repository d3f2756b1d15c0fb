"""The Module API's training step and inference loop that every task module shares."""
import mxnet as mx
import numpy as np

from bench_mxnet import runtime


def classifier(logits):
    """The training head: SoftmaxOutput (softmax fused with the cross-entropy gradient,
    averaged over the batch) and the logits themselves, which predict() returns."""
    label = mx.sym.var("softmax_label")
    return mx.sym.Group([
        mx.sym.SoftmaxOutput(logits, label, normalization="batch", name="softmax"),
        mx.sym.BlockGrad(logits, name="logits")])


class Model(object):
    """A bound Module with its context and the index of the output predict() returns."""

    def __init__(self, symbol, input_shape, batch_size, initializer, optimizer=None,
                 optimizer_params=None, output=0):
        self.ctx = runtime.context()
        self.output = output
        self.has_label = bool(optimizer)
        label_names = ("softmax_label",) if optimizer else None
        if runtime.AMP_DTYPES[runtime.precision()]:
            from mxnet.contrib import amp

            # casts inserted around the operators AMP lists as safe in low precision
            symbol = amp.convert_symbol(symbol, runtime.AMP_DTYPES[runtime.precision()],
                                        data_names=["data"] + list(label_names or []))
        self.mod = mx.mod.Module(symbol, data_names=("data",), label_names=label_names,
                                 context=self.ctx)
        # executors allocated once, for the training batch shape (forward() reshapes for others)
        self.mod.bind(data_shapes=[("data", (batch_size,) + tuple(input_shape))],
                      label_shapes=[("softmax_label", (batch_size,))] if optimizer else None,
                      for_training=bool(optimizer))
        self.mod.init_params(initializer)
        if optimizer:
            # the loss is already a batch mean (normalization="batch"), so no 1/batch rescaling
            self.mod.init_optimizer(optimizer=optimizer,
                                    optimizer_params=dict(optimizer_params, rescale_grad=1.0))

    def batch(self, x, y=None):
        data = [mx.nd.array(x, ctx=self.ctx, dtype=np.float32)]
        if y is None and self.has_label:  # unused in inference, but its shape must follow x's
            label = [mx.nd.zeros((len(x),), ctx=self.ctx)]
        else:
            label = None if y is None else [mx.nd.array(y, ctx=self.ctx, dtype=np.float32)]
        return mx.io.DataBatch(data, label)


def train_epoch(model, batches):
    """One epoch of forward_backward and update; returns the mean loss.

    MXNet's engine is asynchronous: the loss is computed and summed on the device from the
    logits and read once at the end (asnumpy() per step would stall the engine every batch)."""
    total, steps = mx.nd.zeros((1,), ctx=model.ctx), 0
    for x, y in batches:
        batch = model.batch(x, y)
        model.mod.forward_backward(batch)  # train mode: dropout on
        model.mod.update()
        logits = model.mod.get_outputs()[model.output].astype(np.float32)
        total += mx.nd.softmax_cross_entropy(logits, batch.label[0]) / len(x)
        steps += 1
    return float(total.asscalar()) / steps


def predict(model, batches):
    """Outputs for every batch in inference mode (dropout off, batch norm's running
    statistics), copied to host memory as float32 once all batches are queued."""
    outputs = []
    for x in batches:
        model.mod.forward(model.batch(x), is_train=False)
        # a copy: the executor's output array is overwritten by the next forward
        outputs.append(model.mod.get_outputs()[model.output].astype(np.float32, copy=True))
    return np.concatenate([out.asnumpy() for out in outputs])

