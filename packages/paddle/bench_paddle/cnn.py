"""VGG-style CIFAR-10 CNN the Paddle way: paddle.nn.Sequential in dygraph, Momentum, to_static."""

import functools

import paddle
from paddle import nn

from bench_shared.spec import CNN

from . import data_format, loop, weights

native_layout = loop.native_layout


def build_model(run):
    c1, c2, c3, c4 = CNN.conv_channels
    k, p, fmt = CNN.kernel_size, CNN.padding, data_format()
    d1, d2, d3 = CNN.dropout if run["task"]["dropout"] else (0.0, 0.0, 0.0)
    # glorot-uniform kernels (Paddle's fans span the receptive field), zero biases (SPEC rule)
    init = {
        "weight_attr": paddle.ParamAttr(initializer=nn.initializer.XavierUniform()),
        "bias_attr": paddle.ParamAttr(initializer=nn.initializer.Constant(0.0)),
    }
    conv = functools.partial(nn.Conv2D, kernel_size=k, padding=p, data_format=fmt, **init)
    net = nn.Sequential(
        ("conv1", conv(CNN.input_shape[0], c1)),
        ("relu1", nn.ReLU()),
        ("conv2", conv(c1, c2)),
        ("pool1", nn.MaxPool2D(2, data_format=fmt)),
        ("relu2", nn.ReLU()),  # ReLU after the pool
        ("drop1", nn.Dropout(d1)),
        ("conv3", conv(c2, c3)),
        ("relu3", nn.ReLU()),
        ("conv4", conv(c3, c4)),
        ("pool2", nn.MaxPool2D(2, data_format=fmt)),
        ("relu4", nn.ReLU()),
        ("drop2", nn.Dropout(d2)),
        ("flatten", nn.Flatten()),  # C, H, W order in NCHW; weights.py permutes for NHWC
        ("dense1", nn.Linear(CNN.flat_features, CNN.dense_units, **init)),
        ("relu5", nn.ReLU()),
        ("drop3", nn.Dropout(d3)),
        ("dense2", nn.Linear(CNN.dense_units, CNN.num_classes, **init)),
    )
    sgd = run["task"]["optimizer"]
    # Momentum: v = mu v + g; w -= lr v (heavy-ball, as torch's SGD); no nesterov, no decay
    optimizer = functools.partial(
        paddle.optimizer.Momentum,
        learning_rate=sgd["lr"],
        momentum=sgd["momentum"],
        use_nesterov=False,
        weight_decay=None,
    )
    return loop.Model(run, net, optimizer)


def slots(model):
    return weights.slots("cnn", data_format())


train_epoch = loop.train_epoch
predict = loop.predict
