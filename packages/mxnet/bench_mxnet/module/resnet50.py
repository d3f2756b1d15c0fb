"""ResNet-50 v1 features the Module way: the symbol written out as MXNet's own example
symbols write it (Convolution without bias, BatchNorm, Pooling), bound for inference only."""

import mxnet as mx

from bench_mxnet import weights
from bench_mxnet.module import loop
from bench_shared.spec import ResNet50


def conv_bn(x, channels, kernel, stride, name, bn_name, relu=True, pad=None):
    pad = kernel // 2 if pad is None else pad
    x = mx.sym.Convolution(
        x,
        num_filter=channels,
        kernel=(kernel, kernel),
        stride=(stride, stride),
        pad=(pad, pad),
        no_bias=True,
        name=name,
    )
    x = mx.sym.BatchNorm(x, fix_gamma=False, eps=ResNet50.batch_norm_eps, name=bn_name)
    return mx.sym.Activation(x, act_type="relu") if relu else x


def bottleneck(x, width, out, stride, prefix, projection):
    # v1: the stride sits on the first 1x1 convolution
    y = conv_bn(x, width, 1, stride, prefix + "conv1", prefix + "bn1")
    y = conv_bn(y, width, 3, 1, prefix + "conv2", prefix + "bn2")
    y = conv_bn(y, out, 1, 1, prefix + "conv3", prefix + "bn3", relu=False)
    if projection:
        x = conv_bn(x, out, 1, stride, prefix + "shortcut_conv", prefix + "shortcut_bn", relu=False)
    return mx.sym.Activation(y + x, act_type="relu")


def symbol():
    r = ResNet50
    x = conv_bn(
        mx.sym.var("data"),
        r.stem_channels,
        r.stem_kernel,
        r.stem_stride,
        "stem_conv",
        "stem_bn",
        pad=r.stem_padding,
    )
    x = mx.sym.Pooling(
        x,
        pool_type="max",
        kernel=(r.pool_kernel,) * 2,
        stride=(r.pool_stride,) * 2,
        pad=(r.pool_padding,) * 2,
    )
    for s, (blocks, width, out, stride) in enumerate(ResNet50.stages, 1):
        for b in range(blocks):
            x = bottleneck(
                x,
                width,
                out,
                stride if b == 0 else 1,
                "stage%d_block%d_" % (s, b),
                projection=b == 0,
            )
    x = mx.sym.Pooling(x, pool_type="avg", global_pool=True, kernel=(1, 1))
    return mx.sym.flatten(x, name="features")


def build_model(run):
    # He-normal convolutions keep the activations of random weights in range
    he_normal = mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2)
    return loop.Model(symbol(), ResNet50.input_shape, run["task"]["batch_size"], he_normal)


def slots(model):
    return weights.module_slots("resnet50")


predict = loop.predict
