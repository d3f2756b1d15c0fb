"""VGG-style CIFAR-10 CNN the PyTorch way: nn.Sequential, SGD with momentum, channels-last."""
import functools

from torch import nn, optim

from bench_shared.spec import CNN

from . import common


def build_model(run):
    c1, c2, c3, c4 = CNN.conv_channels
    k, p = CNN.kernel_size, CNN.padding
    d1, d2, d3 = CNN.dropout
    net = nn.Sequential(
        nn.Conv2d(CNN.input_shape[0], c1, k, padding=p), nn.ReLU(),
        nn.Conv2d(c1, c2, k, padding=p), nn.MaxPool2d(2), nn.ReLU(),  # ReLU after the pool: cheaper
        nn.Dropout(d1),
        nn.Conv2d(c2, c3, k, padding=p), nn.ReLU(),
        nn.Conv2d(c3, c4, k, padding=p), nn.MaxPool2d(2), nn.ReLU(),
        nn.Dropout(d2),
        nn.Flatten(),  # C, H, W order, whatever the memory format
        nn.Linear(CNN.flat_features, CNN.dense_units), nn.ReLU(),
        nn.Dropout(d3),
        nn.Linear(CNN.dense_units, CNN.num_classes),
    )
    for layer in net:
        if isinstance(layer, (nn.Conv2d, nn.Linear)):
            nn.init.xavier_uniform_(layer.weight)  # glorot-uniform, zero biases (SPEC rule)
            nn.init.zeros_(layer.bias)
    sgd = run["task"]["optimizer"]
    optimizer = functools.partial(optim.SGD, lr=sgd["lr"], momentum=sgd["momentum"])
    return common.Model(run, net, optimizer, image_input=True)


train_epoch = common.train_epoch
predict = common.predict
