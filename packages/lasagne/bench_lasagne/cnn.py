"""VGG-style CIFAR-10 CNN the Lasagne way: a stack of lasagne.layers (NCHW, Theano's native
layout), lasagne.updates.momentum, one compiled theano.function per step."""

import functools

import theano.tensor as T
from lasagne import init, layers, nonlinearities, updates

from bench_shared.spec import CNN

from . import loop, weights
from .layers import Conv2DLayer, relu


def build_model(run):
    c1, c2, c3, c4 = CNN.conv_channels
    k, p = CNN.kernel_size, CNN.padding
    d1, d2, d3 = CNN.dropout if run["task"]["dropout"] else (0.0, 0.0, 0.0)
    # glorot-uniform weights (lasagne.init.GlorotUniform: the fan over a kernel's receptive
    # field), zero biases: SPEC's rule, Lasagne's defaults
    conv = functools.partial(
        Conv2DLayer, filter_size=k, pad=p, W=init.GlorotUniform(), b=init.Constant(0.0)
    )
    images = T.tensor4("images")
    net = layers.InputLayer((None,) + CNN.input_shape, images, name="input")
    net = conv(net, c1, name="conv1")  # ReLU: Lasagne's default nonlinearity
    net = conv(net, c2, nonlinearity=None, name="conv2")
    net = relu(layers.MaxPool2DLayer(net, 2, name="pool1"), "relu2")  # ReLU after the pool
    net = layers.DropoutLayer(net, d1, name="drop1")  # inverted dropout (rescale=True)
    net = conv(net, c3, name="conv3")
    net = conv(net, c4, nonlinearity=None, name="conv4")
    net = relu(layers.MaxPool2DLayer(net, 2, name="pool2"), "relu4")
    net = layers.DropoutLayer(net, d2, name="drop2")
    # DenseLayer flattens its NCHW input in C, H, W order, the neutral kernel's row order
    net = layers.DenseLayer(
        net,
        CNN.dense_units,
        W=init.GlorotUniform(),
        b=init.Constant(0.0),
        nonlinearity=nonlinearities.rectify,
        name="dense1",
    )
    net = layers.DropoutLayer(net, d3, name="drop3")
    net = layers.DenseLayer(
        net,
        CNN.num_classes,
        W=init.GlorotUniform(),
        b=init.Constant(0.0),
        nonlinearity=nonlinearities.identity,
        name="dense2",
    )
    sgd = run["task"]["optimizer"]
    # lasagne.updates.momentum: v = m v - lr g, p = p + v -- SPEC's heavy-ball (v = m v + g,
    # p = p - lr v) with v scaled by -lr: the same steps at a constant learning rate
    momentum = functools.partial(
        updates.momentum, learning_rate=sgd["lr"], momentum=sgd["momentum"]
    )
    return loop.Model("cnn", net, images, momentum)


def slots(model):
    return weights.slots("cnn")


train_epoch = loop.train_epoch
predict = loop.predict
