"""ResNet-50 v1 features the Lasagne way: lasagne.layers (NCHW), a batch-norm layer of our own
(Lasagne 0.1 has none), one compiled deterministic theano.function."""

import theano.tensor as T
from lasagne import init, layers

from bench_shared.spec import ResNet50

from . import loop, weights
from .layers import BatchNormLayer, Conv2DLayer, relu


def conv_bn(net, cout, kernel, stride, prefix, index=""):
    """Convolution without bias (He-normal weights) and its batch norm, no nonlinearity;
    layers <prefix>conv<index>, <prefix>bn<index> (the neutral names' prefixes)."""
    net = Conv2DLayer(
        net,
        cout,
        kernel,
        stride=stride,
        pad=kernel // 2,
        W=init.HeNormal("relu"),
        b=None,
        nonlinearity=None,
        name="%sconv%s" % (prefix, index),
    )
    return BatchNormLayer(net, ResNet50.batch_norm_eps, name="%sbn%s" % (prefix, index))


def bottleneck(net, width, cout, stride, name):
    # v1: the stride sits on the first 1x1 convolution (torchvision's v1.5 moves it to the 3x3)
    shortcut = net
    if stride != 1 or net.output_shape[1] != cout:  # projection shortcut
        shortcut = conv_bn(net, cout, 1, stride, name + "shortcut.")
    y = relu(conv_bn(net, width, 1, stride, name, 1))
    y = relu(conv_bn(y, width, 3, 1, name, 2))
    y = conv_bn(y, cout, 1, 1, name, 3)
    return relu(layers.ElemwiseSumLayer([y, shortcut]))


def build_model(run):
    r = ResNet50
    images = T.tensor4("images")
    net = layers.InputLayer((None,) + r.input_shape, images, name="input")
    net = relu(conv_bn(net, r.stem_channels, r.stem_kernel, r.stem_stride, "stem."))
    net = layers.MaxPool2DLayer(net, r.pool_kernel, stride=r.pool_stride, pad=r.pool_padding)
    for s, (blocks, width, cout, stride) in enumerate(r.stages, 1):
        for b in range(blocks):
            net = bottleneck(net, width, cout, stride if b == 0 else 1, "stage%d.block%d." % (s, b))
    net = layers.GlobalPoolLayer(net)  # the mean over H, W: (N, 2048)
    return loop.Model("resnet50", net, images)


def slots(model):
    return weights.slots("resnet50")


predict = loop.predict
