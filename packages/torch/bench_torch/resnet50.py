"""ResNet-50 v1 features the PyTorch way: explicit modules, eval + inference_mode, channels-last."""
from torch import nn

from bench_shared.spec import ResNet50

from . import common


def conv_bn(cin, cout, kernel, stride=1):
    return nn.Sequential(
        nn.Conv2d(cin, cout, kernel, stride, padding=kernel // 2, bias=False),
        nn.BatchNorm2d(cout, eps=ResNet50.batch_norm_eps))


class Bottleneck(nn.Module):
    def __init__(self, cin, width, cout, stride):
        super().__init__()
        # v1: the stride sits on the first 1x1 convolution (torchvision's v1.5 moves it to the 3x3)
        self.conv1 = conv_bn(cin, width, 1, stride)
        self.conv2 = conv_bn(width, width, 3)
        self.conv3 = conv_bn(width, cout, 1)
        self.shortcut = conv_bn(cin, cout, 1, stride) if stride != 1 or cin != cout else None
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        identity = x if self.shortcut is None else self.shortcut(x)
        y = self.relu(self.conv1(x))
        y = self.relu(self.conv2(y))
        return self.relu(self.conv3(y) + identity)


class ResNet50Features(nn.Module):
    def __init__(self):
        super().__init__()
        stem = ResNet50.stem_channels
        layers = [conv_bn(ResNet50.input_shape[0], stem, 7, 2), nn.ReLU(inplace=True),
                  nn.MaxPool2d(3, stride=2, padding=1)]
        cin = stem
        for blocks, width, cout, stride in ResNet50.stages:
            for b in range(blocks):
                layers.append(Bottleneck(cin, width, cout, stride if b == 0 else 1))
                cin = cout
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten()]
        self.features = nn.Sequential(*layers)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):  # He init keeps activations of random weights in range
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x):
        return self.features(x)


def build_model(run):
    net = ResNet50Features().eval()
    net.requires_grad_(False)
    return common.Model(run, net, image_input=True)


predict = common.predict
