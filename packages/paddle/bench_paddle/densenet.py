"""DenseNet-121 trained data-parallel the Paddle way: explicit nn.Layers in dygraph (to_static
as a switch), BCEWithLogitsLoss over the 14 labels, Adam with the learning rate scaled by the
device count, and paddle.DataParallel across the run's processes (a gloo process group on a
CPU, NCCL on GPUs, joined in bench_paddle.setup with paddle.distributed.init_parallel_env)."""

import functools

import paddle
from paddle import nn

from bench_shared.spec import DenseNet121 as D

from . import data_format, loop, weights


def conv(cin, cout, kernel, stride=1):
    # He-normal over the fan-in (Paddle's KaimingNormal: ReLU gain), no bias before a BN
    return nn.Conv2D(
        cin,
        cout,
        kernel,
        stride,
        padding=kernel // 2,
        data_format=data_format(),
        weight_attr=paddle.ParamAttr(initializer=nn.initializer.KaimingNormal()),
        bias_attr=False,
    )


def bn(channels):
    # momentum 0.9 in Paddle's convention is torch's 0.1
    return nn.BatchNorm2D(channels, epsilon=D.batch_norm_eps, data_format=data_format())


def channel_axis():
    return 1 if data_format() == "NCHW" else 3


class DenseLayer(nn.Layer):
    """BN-ReLU-conv1x1 (4 x growth) -> BN-ReLU-conv3x3 (growth): the block's new features."""

    def __init__(self, cin):
        super().__init__()
        self.bn1, self.conv1 = bn(cin), conv(cin, D.bottleneck_width, 1)
        self.bn2, self.conv2 = bn(D.bottleneck_width), conv(D.bottleneck_width, D.growth_rate, 3)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.conv2(self.relu(self.bn2(self.conv1(self.relu(self.bn1(x))))))


class DenseBlock(nn.Layer):
    def __init__(self, cin, layers):
        super().__init__()
        for i in range(layers):
            setattr(self, "layer%d" % i, DenseLayer(cin + i * D.growth_rate))
        self.axis = channel_axis()

    def forward(self, x):
        features = [x]  # the block's input, then every layer's output, in that order
        for layer in self.children():
            features.append(layer(paddle.concat(features, self.axis)))
        return paddle.concat(features, self.axis)


def transition(cin, cout):
    return nn.Sequential(
        ("bn", bn(cin)),
        ("relu", nn.ReLU()),
        ("conv", conv(cin, cout, 1)),
        ("pool", nn.AvgPool2D(2, 2, data_format=data_format())),
    )


class DenseNet121(nn.Layer):
    def __init__(self):
        super().__init__()
        fmt = data_format()
        self.stem = nn.Sequential(
            ("conv", conv(D.input_shape[0], D.stem_channels, D.stem_kernel, D.stem_stride)),
            ("bn", bn(D.stem_channels)),
            ("relu", nn.ReLU()),
            ("pool", nn.MaxPool2D(D.pool_kernel, D.pool_stride, D.pool_padding, data_format=fmt)),
        )
        c = D.stem_channels
        for b, layers in enumerate(D.block_layers, 1):
            setattr(self, "block%d" % b, DenseBlock(c, layers))
            c += layers * D.growth_rate
            if b < len(D.block_layers):
                setattr(self, "transition%d" % b, transition(c, int(c * D.compression)))
                c = int(c * D.compression)
        self.final = nn.Sequential(
            ("bn", bn(c)),
            ("relu", nn.ReLU()),
            ("pool", nn.AdaptiveAvgPool2D(1, data_format=fmt)),
            ("flatten", nn.Flatten()),
        )
        # logits (the loss has the sigmoid); glorot-uniform kernel, zero bias: SPEC's head
        self.classifier = nn.Linear(
            D.features,
            D.num_labels,
            weight_attr=paddle.ParamAttr(initializer=nn.initializer.XavierUniform()),
            bias_attr=paddle.ParamAttr(initializer=nn.initializer.Constant(0.0)),
        )
        self.nhwc = fmt == "NHWC"

    def forward(self, x):
        if self.nhwc:  # the X-ray pipeline's batches are NCHW, cropped per batch
            x = paddle.transpose(x, [0, 2, 3, 1])
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
        paddle.optimizer.Adam,
        learning_rate=adam["lr"] * world_size,
        beta1=adam["beta1"],
        beta2=adam["beta2"],
        epsilon=adam["eps"],
    )
    model = loop.Model(
        run, DenseNet121(), optimizer, loss_fn=nn.BCEWithLogitsLoss(), label_dtype="float32"
    )
    if world_size > 1:
        # rank 0's parameters (batch-norm statistics included: Paddle parameters) broadcast at
        # construction; gradients all-reduced and averaged in buckets during backward
        model.forward = paddle.DataParallel(model.net)
        # evaluation runs on rank 0 alone: the plain layer (model.inference)
    return model


def slots(model):
    return weights.slots("densenet")


train_epoch = loop.train_epoch
predict = loop.predict
