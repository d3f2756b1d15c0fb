"""ResNet-50 v1 features the TensorFlow 2 way: explicit Keras layers (NHWC, explicit zero
padding so that stride-2 windows align as in every other framework), a tf.function forward
in inference mode (training=False: batch norm uses its running statistics)."""

import keras
import tensorflow as tf
from keras import layers

from bench_shared.spec import ResNet50

from . import loop, weights

native_layout = loop.native_layout


def conv(filters, kernel, stride=1):
    # "same" padding is symmetric only at stride 1; every strided conv here is a 1x1 (v1)
    return layers.Conv2D(
        filters,
        kernel,
        stride,
        padding="same" if kernel > 1 else "valid",
        use_bias=False,
        kernel_initializer="he_normal",
    )


def bn():
    return layers.BatchNormalization(epsilon=ResNet50.batch_norm_eps)


class Bottleneck(keras.layers.Layer):
    def __init__(self, width, filters, stride, project):
        super().__init__()
        # v1: the stride sits on the first 1x1 convolution
        self.conv1, self.bn1 = conv(width, 1, stride), bn()
        self.conv2, self.bn2 = conv(width, 3), bn()
        self.conv3, self.bn3 = conv(filters, 1), bn()
        self.shortcut_conv = conv(filters, 1, stride) if project else None
        self.shortcut_bn = bn() if project else None

    def call(self, x, training=False):
        shortcut = x
        if self.shortcut_conv is not None:
            shortcut = self.shortcut_bn(self.shortcut_conv(x), training=training)
        y = tf.nn.relu(self.bn1(self.conv1(x), training=training))
        y = tf.nn.relu(self.bn2(self.conv2(y), training=training))
        return tf.nn.relu(self.bn3(self.conv3(y), training=training) + shortcut)


class ResNet50Features(keras.Model):
    def __init__(self):
        super().__init__()
        r = ResNet50
        self.stem_pad = layers.ZeroPadding2D(r.stem_padding)
        self.stem_conv = layers.Conv2D(
            r.stem_channels,
            r.stem_kernel,
            r.stem_stride,
            use_bias=False,
            kernel_initializer="he_normal",
        )
        self.stem_bn = bn()
        self.pool_pad = layers.ZeroPadding2D(r.pool_padding)  # after a ReLU, zeros pad like -inf
        self.pool = layers.MaxPool2D(r.pool_kernel, r.pool_stride)
        self.stages = []
        cin = ResNet50.stem_channels
        for blocks, width, filters, stride in ResNet50.stages:
            self.stages.append(
                [
                    Bottleneck(
                        width,
                        filters,
                        stride if b == 0 else 1,
                        project=(b == 0 and (stride != 1 or cin != filters)),
                    )
                    for b in range(blocks)
                ]
            )
            cin = filters
        self.avg = layers.GlobalAveragePooling2D()

    def call(self, x, training=False):
        x = tf.nn.relu(self.stem_bn(self.stem_conv(self.stem_pad(x)), training=training))
        x = self.pool(self.pool_pad(x))
        for stage in self.stages:
            for block in stage:
                x = block(x, training=training)
        return self.avg(x)


def build_model(run):
    c, h, w = ResNet50.input_shape
    model = loop.Model(run, ResNet50Features(), (h, w, c))
    model.net.trainable = False  # feature extraction: no gradients
    return model


def _bn_places(prefix, layer):
    return [
        (prefix + ".gamma", layer.gamma),
        (prefix + ".beta", layer.beta),
        (prefix + ".mean", layer.moving_mean),
        (prefix + ".var", layer.moving_variance),
    ]


def slots(model):
    net = model.net
    places = [("stem.conv.weight", net.stem_conv.kernel)] + _bn_places("stem.bn", net.stem_bn)
    for s, stage in enumerate(net.stages, 1):
        for b, block in enumerate(stage):
            prefix = "stage%d.block%d." % (s, b)
            for i in (1, 2, 3):
                places.append((prefix + "conv%d.weight" % i, getattr(block, "conv%d" % i).kernel))
                places += _bn_places(prefix + "bn%d" % i, getattr(block, "bn%d" % i))
            if block.shortcut_conv is not None:
                places.append((prefix + "shortcut.conv.weight", block.shortcut_conv.kernel))
                places += _bn_places(prefix + "shortcut.bn", block.shortcut_bn)
    return weights.slots("resnet50", places)


predict = loop.predict
