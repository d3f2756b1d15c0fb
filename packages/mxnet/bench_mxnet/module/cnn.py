"""VGG-style CIFAR-10 CNN the Module way: an mx.sym graph, Module.bind, SGD with momentum."""

import mxnet as mx

from bench_mxnet import initialisers, weights
from bench_mxnet.module import loop
from bench_shared.spec import CNN


def conv(x, channels, name):
    k, p = CNN.kernel_size, CNN.padding
    return mx.sym.Convolution(x, num_filter=channels, kernel=(k, k), pad=(p, p), name=name)


def block(x, channels, index, dropout):
    x = mx.sym.Activation(conv(x, channels[0], "conv%d" % index), act_type="relu")
    x = conv(x, channels[1], "conv%d" % (index + 1))
    x = mx.sym.Pooling(x, pool_type="max", kernel=(2, 2), stride=(2, 2))
    x = mx.sym.Activation(x, act_type="relu")  # ReLU after the pool: cheaper
    return mx.sym.Dropout(x, p=dropout) if dropout else x  # active only in training


def build_model(run):
    c1, c2, c3, c4 = CNN.conv_channels
    d1, d2, d3 = CNN.dropout if run["task"]["dropout"] else (0.0, 0.0, 0.0)
    x = block(mx.sym.var("data"), (c1, c2), 1, d1)
    x = block(x, (c3, c4), 3, d2)
    x = mx.sym.flatten(x)  # C, H, W order
    x = mx.sym.FullyConnected(x, num_hidden=CNN.dense_units, name="dense1")
    x = mx.sym.Activation(x, act_type="relu")
    x = mx.sym.Dropout(x, p=d3) if d3 else x
    logits = mx.sym.FullyConnected(x, num_hidden=CNN.num_classes, name="dense2")
    sgd = run["task"]["optimizer"]
    return loop.Model(
        loop.classifier(logits),
        CNN.input_shape,
        run["task"]["batch_size"],
        initialisers.GLOROT_UNIFORM,  # weights; biases zero (Xavier's bias rule)
        "sgd",
        {"learning_rate": sgd["lr"], "momentum": sgd["momentum"]},
        output=1,
    )


def slots(model):
    return weights.module_slots("cnn")


train_epoch = loop.train_epoch
predict = loop.predict
