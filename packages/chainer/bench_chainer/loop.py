"""The Chainer training step and inference loop that every task module shares."""

import chainer
import chainer.functions as F
import numpy as np

from . import device


class Model(object):
    """A Chain with what it runs with: device, optimiser, compute dtype and loss scaling."""

    def __init__(self, run, net, optimizer=None, image_input=False, loss_fn=None):
        self.device = device()
        self.loss_fn = loss_fn or F.softmax_cross_entropy
        self.net = net
        self.net.to_device(self.device)
        # under mixed16 the images go in as float16; token indices stay integers
        self.input_dtype = chainer.get_dtype() if image_input else None
        self.optimizer = optimizer
        if optimizer is not None:
            optimizer.setup(self.net)
            if run["precision"] == "fp16":
                optimizer.use_fp32_update()  # float32 master weights for float16 links
                optimizer.loss_scaling()  # dynamic loss scaling: fp16 gradients underflow

    def to_device(self, array, dtype=None):
        return self.device.send(np.asarray(array, dtype))

    def loss(self, x, t):
        """By default softmax fused into the loss (mean over the batch), in float32."""
        self.last_loss = self.loss_fn(F.cast(self.net(x), np.float32), t)
        return self.last_loss


def train_epoch(model, batches):
    """One epoch of forward, loss, backward and optimiser step; returns the mean loss.

    optimizer.update(lossfun, ...) clears the gradients, runs backward and updates: Chainer's
    idiom. The loss is summed on the device and read once at the end.
    """
    total, steps = 0.0, 0
    with chainer.using_config("train", True):
        for x, y in batches:
            x, t = model.to_device(x, model.input_dtype), model.to_device(y, np.int32)
            model.optimizer.update(model.loss, x, t)
            total = total + model.last_loss.array  # stays on the device
            steps += 1
    return float(total) / steps


def predict(model, batches):
    """Outputs for every batch in test mode without a graph, copied to host memory as float32."""
    outputs = []
    with chainer.using_config("train", False), chainer.no_backprop_mode():
        for x in batches:
            outputs.append(model.net(model.to_device(x, model.input_dtype)).array)
    return chainer.backends.cuda.to_cpu(model.device.xp.concatenate(outputs)).astype(np.float32)
