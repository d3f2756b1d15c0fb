"""The PyTorch training step, inference loop and int8 calibration that the task modules share."""

import contextlib

import numpy as np
import torch

from . import AUTOCAST_DTYPES, device


class Model(object):
    """A network with what it runs with: loss, optimiser, precision and memory format."""

    def __init__(
        self, run, net, optimizer=None, image_input=False, loss_fn=None, label_dtype=torch.long
    ):
        options = run["framework"]["options"]
        self.device = device()
        self.channels_last = bool(options["channels_last"]) and image_input
        memory_format = torch.channels_last if self.channels_last else torch.contiguous_format
        self.net = net.to(self.device, memory_format=memory_format)
        self.optimizer = optimizer(self.net.parameters()) if optimizer else None
        # softmax fused into the loss, batch mean (multi-label tasks: sigmoid + BCE, given)
        self.loss_fn = loss_fn or torch.nn.CrossEntropyLoss()
        self.label_dtype = label_dtype
        self.dtype = AUTOCAST_DTYPES[run["precision"]]
        # fp16 gradients underflow without loss scaling; bf16 has fp32's exponent range
        self.scaler = torch.amp.GradScaler(self.device.type, enabled=self.dtype == torch.float16)
        # torch.compile wraps the module; .net stays the plain module for weights and counts
        self.forward = torch.compile(self.net) if options["compile"] else self.net
        self.inference = self.forward  # what predict() calls (a data-parallel model: its module)

    def autocast(self):
        if self.dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=self.dtype)

    def to_device(self, array):
        return torch.from_numpy(np.ascontiguousarray(array)).to(self.device, non_blocking=True)

    def to_input(self, x):
        t = self.to_device(x)
        return t.contiguous(memory_format=torch.channels_last) if self.channels_last else t


def train_epoch(model, batches):
    """One epoch of forward, loss, backward and optimiser step; returns the mean loss.

    The loss is summed on the device and read once at the end: no host round-trip per step.
    """
    model.net.train()
    total, steps = torch.zeros((), device=model.device), 0
    for x, y in batches:
        x, y = model.to_input(x), model.to_device(y).to(model.label_dtype)
        model.optimizer.zero_grad(set_to_none=True)
        with model.autocast():
            loss = model.loss_fn(model.forward(x), y)
        model.scaler.scale(loss).backward()
        model.scaler.step(model.optimizer)
        model.scaler.update()
        total += loss.detach().float()
        steps += 1
    return total.item() / steps


def predict(model, batches):
    """Outputs for every batch in eval mode without autograd, copied to host memory as float32."""
    model.net.eval()
    outputs = []
    with torch.inference_mode(), model.autocast():
        for x in batches:
            outputs.append(model.inference(model.to_input(x)).float())
    return torch.cat(outputs).cpu().numpy()


def calibrate(model, batches):
    """precision=int8: PyTorch's PT2E static quantization for x86 CPUs (torchao): the network
    exported with a free batch dimension, annotated by X86InductorQuantizer (uint8
    activations per tensor, int8 weights per output channel, conv-bn-relu and conv-add-relu
    fused), observed on `batches`, converted, then lowered by Inductor with freezing, which
    makes the int8 convolutions oneDNN kernels. Inductor compiles at the first prediction."""
    import torch._inductor.config as inductor
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    from torchao.quantization.pt2e.quantizer import x86_inductor_quantizer as x86

    example = (model.to_input(batches[0]),)
    exported = torch.export.export(
        model.net, example, dynamic_shapes=({0: torch.export.Dim("batch")},)
    ).module()
    quantizer = x86.X86InductorQuantizer()
    quantizer.set_global(x86.get_default_x86_inductor_quantization_config())
    prepared = prepare_pt2e(exported, quantizer)
    with torch.no_grad():
        for x in batches:
            prepared(model.to_input(x))
    inductor.freezing = True  # weights as constants: the int8 kernels prepack them
    model.inference = torch.compile(convert_pt2e(prepared))
    return model
