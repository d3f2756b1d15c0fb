"""The Paddle training step and inference loop that every task module shares (dygraph, with
paddle.jit.to_static as a switch)."""

import contextlib
import os
import tempfile

import numpy as np
import paddle
from paddle import inference

from . import AUTOCAST_DTYPES, data_format, on_gpu, threads


def native_layout(x):
    """Images as NHWC where data_format=NHWC: transposed once at load time, never per batch."""
    return x.transpose(0, 2, 3, 1) if data_format() == "NHWC" else x


class Model(object):
    """A network with what it runs with: loss, optimiser, precision and its static graph."""

    def __init__(self, run, net, optimizer=None, loss_fn=None, label_dtype="int64"):
        options = run["framework"]["options"]
        self.net = net
        self.optimizer = optimizer(parameters=net.parameters()) if optimizer else None
        # softmax fused into the loss, batch mean (multi-label tasks: sigmoid + BCE, given)
        self.loss_fn = loss_fn or paddle.nn.CrossEntropyLoss()
        self.label_dtype = label_dtype
        self.dtype = AUTOCAST_DTYPES[run["precision"]]
        # fp16 gradients underflow without loss scaling; bf16 has fp32's exponent range
        self.scaler = paddle.amp.GradScaler() if self.dtype == "float16" else None
        self.to_static = bool(options["to_static"])
        # inference through Paddle Inference (a predictor), built at the first predict() --
        # after any neutral weights are loaded -- so its build lands in the untimed warm-up
        self.use_predictor, self.predictor = bool(options["predictor"]), None
        if self.use_predictor and optimizer is not None:
            raise ValueError(
                "framework.options.predictor=true applies to task=resnet50 "
                "(inference) only; a training task runs in dygraph"
            )
        if self.use_predictor and self.dtype is not None:
            raise NotImplementedError(
                "precision=%s is not supported with framework.options.predictor=true: the "
                "predictor runs the fp32 program; set framework.options.predictor=false"
                % run["precision"]
            )
        if self.to_static:
            # the AST translation of the whole forward (full_graph=True, not SOT's bytecode
            # tracing) into one PIR program per input shape and train/eval mode; no CINN,
            # which the CPU wheel is built without. .net stays the same Layer: its parameters
            # and state dict are unchanged
            self.net = paddle.jit.to_static(net, full_graph=True, backend=None)
        self.forward = self.net  # what train_epoch calls (a data-parallel model: its wrapper)
        self.inference = self.net  # what predict() calls

    def autocast(self):
        if self.dtype is None:
            return contextlib.nullcontext()
        return paddle.amp.auto_cast(dtype=self.dtype, level="O1")

    @staticmethod
    def to_device(array, dtype=None):
        return paddle.to_tensor(np.ascontiguousarray(array), dtype=dtype)


def paddle_inference(net, example):
    """Paddle's deployment path: the network saved as a static program (paddle.jit.save) and
    run by a Paddle Inference predictor with its IR optimisation passes (batch norm folded
    into the convolutions, fusions) and, on the CPU, oneDNN kernels and the run's threads."""
    spec = paddle.static.InputSpec([None] + list(example.shape[1:]), "float32")
    with tempfile.TemporaryDirectory() as directory:
        prefix = os.path.join(directory, "model")
        paddle.jit.save(net, prefix, input_spec=[spec])
        program = prefix + (".json" if os.path.exists(prefix + ".json") else ".pdmodel")
        config = inference.Config(program, prefix + ".pdiparams")
        if on_gpu():
            config.enable_use_gpu(256, int(paddle.get_device().split(":")[1]))  # MB, device
        else:
            config.disable_gpu()
            config.enable_onednn()
            config.set_cpu_math_library_num_threads(threads())
        config.switch_ir_optim(True)
        config.disable_glog_info()
        return inference.create_predictor(config)


def predict_with_predictor(model, batches):
    outputs = []
    for x in batches:
        x = np.ascontiguousarray(x, np.float32)
        if model.predictor is None:
            model.predictor = paddle_inference(model.net, x)
        p = model.predictor
        feed = p.get_input_handle(p.get_input_names()[0])
        feed.reshape(list(x.shape))
        feed.copy_from_cpu(x)
        p.run()
        outputs.append(p.get_output_handle(p.get_output_names()[0]).copy_to_cpu())
    return np.concatenate(outputs).astype(np.float32)


def train_epoch(model, batches):
    """One epoch of forward, loss, backward and optimiser step; returns the mean loss.

    The loss is summed on the device and read once at the end: no host round-trip per step.
    """
    model.net.train()
    total, steps = paddle.zeros([], "float32"), 0
    for x, y in batches:
        x, y = model.to_device(x), model.to_device(y, model.label_dtype)
        with model.autocast():
            loss = model.loss_fn(model.forward(x), y)
        if model.scaler is not None:
            model.scaler.scale(loss).backward()
            model.scaler.step(model.optimizer)
            model.scaler.update()
        else:
            loss.backward()
            model.optimizer.step()
        model.optimizer.clear_grad(set_to_zero=False)  # release the gradients, as torch's None
        total += loss.detach().astype("float32")
        steps += 1
    return float(total) / steps


def predict(model, batches):
    """Outputs for every batch in eval mode without autograd, copied to host memory as float32."""
    model.net.eval()
    if model.use_predictor:
        return predict_with_predictor(model, batches)
    outputs = []
    with paddle.no_grad(), model.autocast():
        for x in batches:
            outputs.append(model.inference(model.to_device(x)).astype("float32"))
    return paddle.concat(outputs).numpy()
