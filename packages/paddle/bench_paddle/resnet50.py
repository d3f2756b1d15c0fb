"""ResNet-50 v1 features the Paddle way: explicit nn.Layers, eval + no_grad, to_static."""

import paddle
from paddle import nn

from bench_shared.spec import ResNet50

from . import data_format, loop, weights

native_layout = loop.native_layout


def conv(cin, cout, kernel, stride=1):
    # He-normal (fan_in) keeps activations of random weights in range; no bias before a BN
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
    return nn.BatchNorm2D(channels, epsilon=ResNet50.batch_norm_eps, data_format=data_format())


class Bottleneck(nn.Layer):
    def __init__(self, cin, width, cout, stride):
        super().__init__()
        # v1: the stride sits on the first 1x1 convolution (PaddleClas' ResNet50 puts it on the 3x3)
        self.conv1, self.bn1 = conv(cin, width, 1, stride), bn(width)
        self.conv2, self.bn2 = conv(width, width, 3), bn(width)
        self.conv3, self.bn3 = conv(width, cout, 1), bn(cout)
        self.shortcut = None
        if stride != 1 or cin != cout:  # projection shortcut
            self.shortcut = nn.Sequential(("conv", conv(cin, cout, 1, stride)), ("bn", bn(cout)))
        self.relu = nn.ReLU()

    def forward(self, x):
        identity = x if self.shortcut is None else self.shortcut(x)
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        return self.relu(self.bn3(self.conv3(y)) + identity)


class ResNet50Features(nn.Layer):
    def __init__(self):
        super().__init__()
        r, stem = ResNet50, ResNet50.stem_channels
        self.stem = nn.Sequential(
            ("conv", conv(r.input_shape[0], stem, r.stem_kernel, r.stem_stride)),
            ("bn", bn(stem)),
            ("relu", nn.ReLU()),
            (
                "pool",
                nn.MaxPool2D(
                    r.pool_kernel, r.pool_stride, r.pool_padding, data_format=data_format()
                ),
            ),
        )
        cin = stem
        for s, (blocks, width, cout, stride) in enumerate(ResNet50.stages, 1):
            stage = []
            for b in range(blocks):
                stage.append(Bottleneck(cin, width, cout, stride if b == 0 else 1))
                cin = cout
            setattr(self, "stage%d" % s, nn.Sequential(*stage))
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2D(1, data_format=data_format()), nn.Flatten())

    def forward(self, x):
        x = self.stem(x)
        x = self.stage4(self.stage3(self.stage2(self.stage1(x))))
        return self.pool(x)


def build_model(run):
    net = ResNet50Features()
    net.eval()
    return loop.Model(run, net)


def slots(model):
    return weights.slots("resnet50")


predict = loop.predict
