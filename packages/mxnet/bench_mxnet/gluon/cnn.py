"""VGG-style CIFAR-10 CNN the Gluon way: nn.HybridSequential, hybridised, SGD with momentum."""

import collections

from mxnet.gluon import nn

from bench_mxnet import initialisers, weights
from bench_mxnet.gluon import loop
from bench_shared import weights as neutral
from bench_shared.spec import CNN


def build_model(run):
    c1, c2, c3, c4 = CNN.conv_channels
    k, p = CNN.kernel_size, CNN.padding
    d1, d2, d3 = CNN.dropout if run["task"]["dropout"] else (0.0, 0.0, 0.0)
    # glorot-uniform weights, zero biases (Gluon's default bias initialiser)
    conv = dict(kernel_size=k, padding=p, weight_initializer=initialisers.GLOROT_UNIFORM)
    net = nn.HybridSequential(prefix="")
    net.add(
        nn.Conv2D(c1, in_channels=CNN.input_shape[0], activation="relu", prefix="conv1_", **conv),
        nn.Conv2D(c2, in_channels=c1, prefix="conv2_", **conv),
        nn.MaxPool2D(2),
        nn.Activation("relu"),  # ReLU after the pool: cheaper
        nn.Dropout(d1),
        nn.Conv2D(c3, in_channels=c2, activation="relu", prefix="conv3_", **conv),
        nn.Conv2D(c4, in_channels=c3, prefix="conv4_", **conv),
        nn.MaxPool2D(2),
        nn.Activation("relu"),
        nn.Dropout(d2),
        # Dense flattens its NCHW input in C, H, W order
        nn.Dense(
            CNN.dense_units,
            activation="relu",
            in_units=CNN.flat_features,
            weight_initializer=initialisers.GLOROT_UNIFORM,
            prefix="dense1_",
        ),
        nn.Dropout(d3),
        nn.Dense(
            CNN.num_classes,
            in_units=CNN.dense_units,
            weight_initializer=initialisers.GLOROT_UNIFORM,
            prefix="dense2_",
        ),
    )
    sgd = run["task"]["optimizer"]
    return loop.Model(
        net, CNN.input_shape, "sgd", {"learning_rate": sgd["lr"], "momentum": sgd["momentum"]}
    )


def slots(model):
    """Neutral name -> Gluon Parameter name: conv1.weight is conv1_weight, and so on."""
    return collections.OrderedDict(
        (name, weights.slot(name, name.replace(".", "_"))) for name in neutral.layout("cnn")
    )


train_epoch = loop.train_epoch
predict = loop.predict
