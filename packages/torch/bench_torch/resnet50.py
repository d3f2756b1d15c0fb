"""ResNet-50 v1 features the PyTorch way: explicit modules, eval + inference_mode, channels-last."""

import collections

from torch import nn

from bench_shared.spec import ResNet50

from . import loop, weights


def conv(cin, cout, kernel, stride=1):
    return nn.Conv2d(cin, cout, kernel, stride, padding=kernel // 2, bias=False)


def bn(channels):
    return nn.BatchNorm2d(channels, eps=ResNet50.batch_norm_eps)


class Bottleneck(nn.Module):
    def __init__(self, cin, width, cout, stride):
        super().__init__()
        # v1: the stride sits on the first 1x1 convolution (torchvision's v1.5 moves it to the 3x3)
        self.conv1, self.bn1 = conv(cin, width, 1, stride), bn(width)
        self.conv2, self.bn2 = conv(width, width, 3), bn(width)
        self.conv3, self.bn3 = conv(width, cout, 1), bn(cout)
        self.shortcut = None
        if stride != 1 or cin != cout:  # projection shortcut
            self.shortcut = nn.Sequential(
                collections.OrderedDict([("conv", conv(cin, cout, 1, stride)), ("bn", bn(cout))])
            )
        # one ReLU per use: PT2E's x86 quantizer (precision=int8) finds its conv-add-relu
        # patterns by module, and one module called three times is one partition to it
        self.relu1, self.relu2, self.relu3 = (nn.ReLU(inplace=True) for _ in range(3))

    def forward(self, x):
        identity = x if self.shortcut is None else self.shortcut(x)
        y = self.relu1(self.bn1(self.conv1(x)))
        y = self.relu2(self.bn2(self.conv2(y)))
        return self.relu3(self.bn3(self.conv3(y)) + identity)


class ResNet50Features(nn.Module):
    def __init__(self):
        super().__init__()
        r, stem = ResNet50, ResNet50.stem_channels
        self.stem = nn.Sequential(
            collections.OrderedDict(
                [
                    ("conv", conv(r.input_shape[0], stem, r.stem_kernel, r.stem_stride)),
                    ("bn", bn(stem)),
                    ("relu", nn.ReLU(inplace=True)),
                    ("pool", nn.MaxPool2d(r.pool_kernel, r.pool_stride, r.pool_padding)),
                ]
            )
        )
        cin = stem
        for s, (blocks, width, cout, stride) in enumerate(ResNet50.stages, 1):
            stage = []
            for b in range(blocks):
                stage.append(Bottleneck(cin, width, cout, stride if b == 0 else 1))
                cin = cout
            setattr(self, "stage%d" % s, nn.Sequential(*stage))
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten())
        for m in self.modules():
            if isinstance(m, nn.Conv2d):  # He init keeps activations of random weights in range
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x):
        x = self.stem(x)
        x = self.stage4(self.stage3(self.stage2(self.stage1(x))))
        return self.pool(x)


def build_model(run):
    net = ResNet50Features().eval()
    net.requires_grad_(False)
    return loop.Model(run, net, image_input=True)


def slots(model):
    return weights.slots("resnet50")


predict = loop.predict
calibrate = loop.calibrate
