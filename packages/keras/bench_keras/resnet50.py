"""ResNet-50 v1 features the Keras way: keras.applications.ResNet50(weights=None,
include_top=False, pooling="avg") and model.predict.

Departures from SPEC's model, both harmless: its convolutions carry biases (Keras counts
23,534,592 trainable weights; they are zeroed at build time and left out of SPEC's 23,508,032
and of tensors(): the neutral weights do not fill them), and its batch-norm epsilon is
1.001e-5 instead of 1e-5."""

import keras
import numpy as np

from bench_shared.spec import ResNet50

from . import loop, options, weights

native_layout = loop.native_layout  # NCHW -> NHWC once


def build_model(run):
    c, h, w = ResNet50.input_shape
    model = keras.applications.ResNet50(
        weights=None, include_top=False, pooling="avg", input_shape=(h, w, c)
    )  # never downloads
    model.compile(jit_compile=bool(options()["jit_compile"]))
    model.spec_excluded = tuple(v.path for v in _conv_biases(model))  # SPEC's model lacks them
    for bias in _conv_biases(model):
        bias.assign(np.zeros(bias.shape, np.float32))
    return model


def _conv_biases(model):
    return [
        layer.bias
        for layer in model.layers
        if isinstance(layer, keras.layers.Conv2D) and layer.use_bias
    ]


def _keras_name(stage, block, index):
    return "conv%d_block%d_%d" % (stage + 1, block + 1, index)  # Keras counts stages from conv2


def slots(model):
    def bn(prefix, name):
        layer = model.get_layer(name)
        return [
            (prefix + ".gamma", layer.gamma),
            (prefix + ".beta", layer.beta),
            (prefix + ".mean", layer.moving_mean),
            (prefix + ".var", layer.moving_variance),
        ]

    places = [("stem.conv.weight", model.get_layer("conv1_conv").kernel)] + bn(
        "stem.bn", "conv1_bn"
    )
    for s, (blocks, _, _, _) in enumerate(ResNet50.stages, 1):
        for b in range(blocks):
            prefix = "stage%d.block%d." % (s, b)
            for i in (1, 2, 3):
                name = _keras_name(s, b, i)
                places.append(
                    (prefix + "conv%d.weight" % i, model.get_layer(name + "_conv").kernel)
                )
                places += bn(prefix + "bn%d" % i, name + "_bn")
            if b == 0:  # Keras names the projection shortcut block1_0
                name = _keras_name(s, b, 0)
                places.append(
                    (prefix + "shortcut.conv.weight", model.get_layer(name + "_conv").kernel)
                )
                places += bn(prefix + "shortcut.bn", name + "_bn")
    return weights.slots("resnet50", places)


predict = loop.predict
