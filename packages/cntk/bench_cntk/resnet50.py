"""ResNet-50 v1 features the CNTK way: layers built by hand (no model zoo is reachable),
Convolution2D + BatchNormalization bottlenecks, Function.eval in inference mode."""

import collections

import numpy as np

from bench_shared.spec import ResNet50

from . import cntk_module, loop, weights

C = cntk_module()
L = C.layers


def conv_bn(named, prefix, bn_prefix, cout, kernel, stride=1, relu=True, pad=None):
    """Convolution without bias + batch norm (+ ReLU); its tensors go into `named`."""
    pad = kernel > 1 if pad is None else pad
    conv = L.Convolution2D(
        (kernel, kernel), cout, strides=stride, pad=pad, bias=False, init=C.he_normal()
    )  # He init keeps random activations in range
    bn = L.BatchNormalization(map_rank=1, epsilon=ResNet50.batch_norm_eps)
    named[prefix + ".weight"] = conv.W
    named[bn_prefix + ".gamma"], named[bn_prefix + ".beta"] = bn.scale, bn.bias
    named[bn_prefix + ".mean"] = bn.aggregate_mean  # running statistics: Constants, not
    named[bn_prefix + ".var"] = bn.aggregate_variance  # Parameters (not counted)
    return L.Sequential([conv, bn, C.relu] if relu else [conv, bn])


def bottleneck(named, prefix, x, cin, width, cout, stride):
    # v1: the stride sits on the first 1x1 convolution (torchvision's v1.5 moves it to the 3x3)
    y = conv_bn(named, prefix + "conv1", prefix + "bn1", width, 1, stride)(x)
    y = conv_bn(named, prefix + "conv2", prefix + "bn2", width, 3)(y)
    y = conv_bn(named, prefix + "conv3", prefix + "bn3", cout, 1, relu=False)(y)
    if stride != 1 or cin != cout:  # projection shortcut
        x = conv_bn(
            named, prefix + "shortcut.conv", prefix + "shortcut.bn", cout, 1, stride, relu=False
        )(x)
    return C.relu(y + x)


def build_model(run):
    named = collections.OrderedDict()
    x = C.input_variable(ResNet50.input_shape)  # CHW: CNTK's native layout
    stem = ResNet50.stem_channels
    y = conv_bn(
        named,
        "stem.conv",
        "stem.bn",
        stem,
        ResNet50.stem_kernel,
        ResNet50.stem_stride,
        pad=loop.same_padding(ResNet50.stem_kernel, ResNet50.stem_padding),
    )(x)
    pool = ResNet50.pool_kernel
    y = L.MaxPooling(
        (pool, pool),
        strides=ResNet50.pool_stride,
        pad=loop.same_padding(pool, ResNet50.pool_padding),
    )(y)
    cin = stem
    for s, (blocks, width, cout, stride) in enumerate(ResNet50.stages, 1):
        for b in range(blocks):
            y = bottleneck(
                named, "stage%d.block%d." % (s, b), y, cin, width, cout, stride if b == 0 else 1
            )
            cin = cout
    features = C.reshape(L.GlobalAveragePooling()(y), (ResNet50.features,))
    for name, variable in named.items():  # shapes are known once the graph is built
        if name.endswith(".var"):
            variable.value = np.ones(variable.shape, np.float32)  # CNTK starts it at 0, not 1
    return loop.Model(features, x, named)


def slots(model):
    return weights.slots(model.named, "resnet50")


predict = loop.predict
