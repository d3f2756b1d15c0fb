"""VGG-style CIFAR-10 CNN the PyTorch way: nn.Sequential, SGD with momentum, channels-last."""

import collections
import functools

from torch import nn, optim

from bench_shared.spec import CNN

from . import loop, weights


def build_model(run):
    c1, c2, c3, c4 = CNN.conv_channels
    k, p = CNN.kernel_size, CNN.padding
    d1, d2, d3 = CNN.dropout if run["task"]["dropout"] else (0.0, 0.0, 0.0)
    net = nn.Sequential(
        collections.OrderedDict(
            [
                ("conv1", nn.Conv2d(CNN.input_shape[0], c1, k, padding=p)),
                ("relu1", nn.ReLU()),
                ("conv2", nn.Conv2d(c1, c2, k, padding=p)),
                ("pool1", nn.MaxPool2d(2)),
                ("relu2", nn.ReLU()),  # ReLU after the pool: cheaper
                ("drop1", nn.Dropout(d1)),
                ("conv3", nn.Conv2d(c2, c3, k, padding=p)),
                ("relu3", nn.ReLU()),
                ("conv4", nn.Conv2d(c3, c4, k, padding=p)),
                ("pool2", nn.MaxPool2d(2)),
                ("relu4", nn.ReLU()),
                ("drop2", nn.Dropout(d2)),
                ("flatten", nn.Flatten()),  # C, H, W order, whatever the memory format
                ("dense1", nn.Linear(CNN.flat_features, CNN.dense_units)),
                ("relu5", nn.ReLU()),
                ("drop3", nn.Dropout(d3)),
                ("dense2", nn.Linear(CNN.dense_units, CNN.num_classes)),
            ]
        )
    )
    for layer in net:
        if isinstance(layer, (nn.Conv2d, nn.Linear)):
            nn.init.xavier_uniform_(layer.weight)  # glorot-uniform, zero biases (SPEC rule)
            nn.init.zeros_(layer.bias)
    sgd = run["task"]["optimizer"]
    optimizer = functools.partial(optim.SGD, lr=sgd["lr"], momentum=sgd["momentum"])
    return loop.Model(run, net, optimizer, image_input=True)


def slots(model):
    return weights.slots("cnn")


train_epoch = loop.train_epoch
predict = loop.predict
