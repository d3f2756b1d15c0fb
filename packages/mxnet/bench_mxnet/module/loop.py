"""The Module API's training step and inference loop that every task module shares."""

import functools

import mxnet as mx
import numpy as np

from bench_mxnet import runtime


def classifier(logits):
    """The training head: SoftmaxOutput (softmax fused with the cross-entropy gradient,
    averaged over the batch) and the logits themselves, which predict() returns."""
    label = mx.sym.var("softmax_label")
    return mx.sym.Group(
        [
            mx.sym.SoftmaxOutput(logits, label, normalization="batch", name="softmax"),
            mx.sym.BlockGrad(logits, name="logits"),
        ]
    )


class Model(object):
    """A bound Module with its contexts and the index of the output predict() returns.

    contexts: more than one trains data-parallel: mx.mod.Module(context=[...]) splits each
    batch over them itself, and its kvstore (runtime.kvstore()) sums their gradients and
    applies the update once (update_on_kvstore), every context pulling the new weights.
    label_shape: one example's label (() for a class index); loss(outputs, label): the batch's
    summed loss from the outputs (default: softmax cross-entropy of the logits)."""

    def __init__(
        self,
        symbol,
        input_shape,
        batch_size,
        initializer,
        optimizer=None,
        optimizer_params=None,
        output=0,
        contexts=None,
        label_name="softmax_label",
        label_shape=(),
        loss=None,
    ):
        self.ctxs = contexts or [runtime.context()]
        self.ctx = self.ctxs[0]
        self.output = output
        self.has_label = bool(optimizer)
        self.label_names = (label_name,) if optimizer else None
        self.label_shape = tuple(label_shape)
        self.loss = loss or functools.partial(softmax_loss, output=output)
        if runtime.AMP_DTYPES[runtime.precision()]:
            from mxnet.contrib import amp

            # casts inserted around the operators AMP lists as safe in low precision
            symbol = amp.convert_symbol(
                symbol,
                runtime.AMP_DTYPES[runtime.precision()],
                data_names=["data"] + list(self.label_names or []),
            )
        self.symbol, self.input_shape = symbol, tuple(input_shape)
        self.mod = mx.mod.Module(
            symbol, data_names=("data",), label_names=self.label_names, context=self.ctxs
        )
        # executors allocated once, for the training batch shape (forward() reshapes for others)
        self.mod.bind(
            data_shapes=[("data", (batch_size,) + self.input_shape)],
            label_shapes=self.label_shapes(batch_size),
            for_training=bool(optimizer),
        )
        self.mod.init_params(initializer)
        self.optimizer = None
        if optimizer:
            # the loss is already a batch mean on each context (normalization="batch"), so no
            # 1/batch rescaling; the kvstore sums the contexts' gradients: 1/contexts
            self.optimizer = dict(
                optimizer=optimizer,
                optimizer_params=dict(optimizer_params, rescale_grad=1.0 / len(self.ctxs)),
            )
        self.inference = None  # data-parallel: a Module on the first context alone (predict)

    def label_shapes(self, batch_size):
        if not self.label_names:
            return None
        return [(self.label_names[0], (batch_size,) + self.label_shape)]

    def ready_to_train(self):
        """The optimizer, created at the first training step rather than in build_model: with
        several contexts the kvstore keeps its own copy of the weights from that moment, so
        weights loaded after build_model (init=neutral) must be in place first."""
        if not self.mod.optimizer_initialized:
            self.mod.init_optimizer(kvstore=runtime.kvstore(), **self.optimizer)

    def batch(self, x, y=None):
        data = [mx.nd.array(x, ctx=self.ctx, dtype=np.float32)]
        if y is None and self.has_label:  # unused in inference, but its shape must follow x's
            label = [mx.nd.zeros((len(x),) + self.label_shape, ctx=self.ctx)]
        else:
            label = None if y is None else [mx.nd.array(y, ctx=self.ctx, dtype=np.float32)]
        return mx.io.DataBatch(data, label)


def softmax_loss(outputs, label, output):
    """The batch's summed cross-entropy, from the logits (the outputs' `output`)."""
    return mx.nd.softmax_cross_entropy(outputs[output].astype(np.float32), label)


def train_epoch(model, batches):
    """One epoch of forward_backward and update; returns the mean loss.

    MXNet's engine is asynchronous: the loss is computed and summed on the device from the
    outputs and read once at the end (asnumpy() per step would stall the engine every batch)."""
    model.ready_to_train()
    total, steps = mx.nd.zeros((1,), ctx=model.ctx), 0
    for x, y in batches:
        batch = model.batch(x, y)
        model.mod.forward_backward(batch)  # train mode: dropout on
        model.mod.update()
        total += model.loss(model.mod.get_outputs(), batch.label[0]) / len(x)
        steps += 1
    keep_first_context_statistics(model)
    return float(total.asscalar()) / steps


def keep_first_context_statistics(model):
    """Batch norm's running statistics (aux states) are no gradients: each context updates
    its own from its share of the batches, and Module.get_params() would average them. The
    first context's are the model's: copied to the others once per epoch, as
    DistributedDataParallel broadcasts rank 0's buffers (the executor group's aux_arrays hold
    each aux state on every context; Module has no public setter per context)."""
    if len(model.ctxs) == 1:
        return
    # synchronously, at the epoch's end: queued behind the epoch's last steps, the copies
    # were lost on this CPU (MXNet 1.9.1, the other contexts kept an older state)
    mx.nd.waitall()
    for arrays in model.mod._exec_group.aux_arrays:
        for other in arrays[1:]:
            arrays[0].copyto(other)
    mx.nd.waitall()


def inference_module(model):
    """The Module predict() runs: the training one, or with several contexts a Module on the
    first context alone holding the training one's current weights (an evaluation batch
    need not split over the contexts; the last may hold a single example)."""
    if len(model.ctxs) == 1:
        return model.mod
    if model.inference is None:
        model.inference = mx.mod.Module(
            model.symbol, data_names=("data",), label_names=model.label_names, context=model.ctx
        )
        model.inference.bind(
            data_shapes=[("data", (1,) + model.input_shape)],
            label_shapes=model.label_shapes(1),
            for_training=False,
        )
    arg_params, aux_params = model.mod.get_params()
    model.inference.set_params(arg_params, aux_params)
    return model.inference


def predict(model, batches):
    """Outputs for every batch in inference mode (dropout off, batch norm's running
    statistics), copied to host memory as float32 once all batches are queued."""
    mod, outputs = inference_module(model), []
    for x in batches:
        mod.forward(model.batch(x), is_train=False)
        # a copy: the executor's output array is overwritten by the next forward
        outputs.append(mod.get_outputs()[model.output].astype(np.float32, copy=True))
    return np.concatenate([out.asnumpy() for out in outputs])
