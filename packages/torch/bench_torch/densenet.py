"""DenseNet-121 trained data-parallel the PyTorch way: explicit modules, BCEWithLogitsLoss over
the 14 labels, Adam with the learning rate scaled by the device count, and
DistributedDataParallel across the run's processes (gloo on a CPU, NCCL on GPUs; the process
group is joined in bench_torch.setup, as torchrun's workers do), channels-last."""

import collections
import functools

import torch
from torch import nn, optim
from torch.nn.parallel import DistributedDataParallel

from bench_shared.spec import DenseNet121 as D

from . import loop, weights


def conv(cin, cout, kernel, stride=1):
    return nn.Conv2d(cin, cout, kernel, stride, padding=kernel // 2, bias=False)


def bn(channels):
    return nn.BatchNorm2d(channels, eps=D.batch_norm_eps)


class DenseLayer(nn.Module):
    """BN-ReLU-conv1x1 (4 x growth) -> BN-ReLU-conv3x3 (growth): the block's new features."""

    def __init__(self, cin):
        super().__init__()
        self.bn1, self.conv1 = bn(cin), conv(cin, D.bottleneck_width, 1)
        self.bn2, self.conv2 = bn(D.bottleneck_width), conv(D.bottleneck_width, D.growth_rate, 3)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.conv2(self.relu(self.bn2(self.conv1(self.relu(self.bn1(x))))))


class DenseBlock(nn.Module):
    def __init__(self, cin, layers):
        super().__init__()
        for i in range(layers):
            setattr(self, "layer%d" % i, DenseLayer(cin + i * D.growth_rate))

    def forward(self, x):
        features = [x]  # the block's input, then every layer's output, in that order
        for layer in self.children():
            features.append(layer(torch.cat(features, 1)))
        return torch.cat(features, 1)


class Transition(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(
            collections.OrderedDict(
                [
                    ("bn", bn(cin)),
                    ("relu", nn.ReLU(inplace=True)),
                    ("conv", conv(cin, cout, 1)),
                    ("pool", nn.AvgPool2d(2, 2)),
                ]
            )
        )


class DenseNet121(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(
            collections.OrderedDict(
                [
                    ("conv", conv(D.input_shape[0], D.stem_channels, D.stem_kernel, D.stem_stride)),
                    ("bn", bn(D.stem_channels)),
                    ("relu", nn.ReLU(inplace=True)),
                    ("pool", nn.MaxPool2d(D.pool_kernel, D.pool_stride, D.pool_padding)),
                ]
            )
        )
        c = D.stem_channels
        for b, layers in enumerate(D.block_layers, 1):
            setattr(self, "block%d" % b, DenseBlock(c, layers))
            c += layers * D.growth_rate
            if b < len(D.block_layers):
                setattr(self, "transition%d" % b, Transition(c, int(c * D.compression)))
                c = int(c * D.compression)
        self.final = nn.Sequential(
            collections.OrderedDict(
                [
                    ("bn", bn(c)),
                    ("relu", nn.ReLU(inplace=True)),
                    ("pool", nn.AdaptiveAvgPool2d(1)),
                    ("flatten", nn.Flatten()),
                ]
            )
        )
        self.classifier = nn.Linear(D.features, D.num_labels)  # logits; the loss has the sigmoid
        # SPEC's initialisers (spec.DenseNet121.init)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
        nn.init.xavier_uniform_(self.classifier.weight)
        nn.init.zeros_(self.classifier.bias)

    def forward(self, x):
        x = self.stem(x)
        for b in range(1, len(D.block_layers) + 1):
            x = getattr(self, "block%d" % b)(x)
            if b < len(D.block_layers):
                x = getattr(self, "transition%d" % b)(x)
        return self.classifier(self.final(x))


def build_model(run):
    world_size = run.get("devices", 1)
    adam = run["task"]["optimizer"]
    # SPEC: Adam at 1e-4 per device, the learning rate scaled linearly with the global batch
    optimizer = functools.partial(
        optim.Adam,
        lr=adam["lr"] * world_size,
        betas=(adam["beta1"], adam["beta2"]),
        eps=adam["eps"],
    )
    with torch.no_grad():
        net = DenseNet121()
    model = loop.Model(
        run,
        net,
        optimizer,
        image_input=True,
        loss_fn=nn.BCEWithLogitsLoss(),
        label_dtype=torch.float32,
    )
    if world_size > 1:
        # gradients all-reduced in buckets during backward; rank 0's weights and batch-norm
        # statistics broadcast to every rank (at construction and before each forward)
        device_ids = [model.device] if model.device.type == "cuda" else None
        ddp = DistributedDataParallel(model.net, device_ids=device_ids)
        compile_ = run["framework"]["options"]["compile"]
        model.forward = torch.compile(ddp) if compile_ else ddp
        # evaluation runs on rank 0 alone: the plain module (DDP's forward would wait for the
        # other ranks to broadcast buffers with it)
        model.inference = torch.compile(model.net) if compile_ else model.net
    return model


def slots(model):
    return weights.slots("densenet")


train_epoch = loop.train_epoch
predict = loop.predict
