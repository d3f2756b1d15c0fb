"""ResNet-50 v1 features the Keras 2 way: keras.applications.resnet.ResNet50(weights=None,
include_top=False, pooling="avg") in channels_first and model.predict.

keras.applications.resnet.ResNet50 (keras-applications' resnet_common, the model Keras 3 ships
as keras.applications.ResNet50, with the same layer names): Keras 2.3's top-level
keras.applications.ResNet50, the one the 2018 benchmark ran, is the older resnet50 module,
whose batch norms keep Keras' default epsilon 1e-3 (SPEC: 1e-5). Departures from SPEC's model,
both harmless: its convolutions carry biases (Keras counts 23,534,592 trainable weights; they
are zeroed at build time and left out of SPEC's 23,508,032 and of tensors(): the neutral
weights do not fill them), and its batch-norm epsilon is 1.001e-5 instead of 1e-5."""

import numpy as np
from keras import backend as K
from keras import layers
from keras.applications import resnet

from bench_shared.spec import ResNet50

from . import loop, weights


def build_model(run):
    model = resnet.ResNet50(
        weights=None, include_top=False, pooling="avg", input_shape=ResNet50.input_shape
    )  # never downloads; (C, H, W)
    model.spec_excluded = tuple(v.name for v in _conv_biases(model))  # SPEC's model lacks them
    for bias in _conv_biases(model):
        K.set_value(bias, np.zeros(K.int_shape(bias), np.float32))
    loop.build_functions(model, train=False)  # Theano compiles the graph here
    return model


def _conv_biases(model):
    return [
        layer.bias for layer in model.layers if isinstance(layer, layers.Conv2D) and layer.use_bias
    ]


def _keras_name(stage, block, index):
    return "conv%d_block%d_%d" % (stage + 1, block + 1, index)  # Keras counts stages from conv2


def slots(model):
    places = [
        ("stem.conv.weight", model.get_layer("conv1_conv").kernel)
    ] + weights.batch_norm_places("stem.bn", model.get_layer("conv1_bn"))
    for s, (blocks, _, _, _) in enumerate(ResNet50.stages, 1):
        for b in range(blocks):
            prefix = "stage%d.block%d." % (s, b)
            for i in (1, 2, 3):
                name = _keras_name(s, b, i)
                places.append(
                    (prefix + "conv%d.weight" % i, model.get_layer(name + "_conv").kernel)
                )
                places += weights.batch_norm_places(
                    prefix + "bn%d" % i, model.get_layer(name + "_bn")
                )
            if b == 0:  # Keras names the projection shortcut block1_0
                name = _keras_name(s, b, 0)
                places.append(
                    (prefix + "shortcut.conv.weight", model.get_layer(name + "_conv").kernel)
                )
                places += weights.batch_norm_places(
                    prefix + "shortcut.bn", model.get_layer(name + "_bn")
                )
    return weights.slots("resnet50", places)


predict = loop.predict
