"""DenseNet-121 trained data-parallel the TensorFlow 2 way: explicit Keras layers (NHWC), the
custom training loop of bench_tensorflow.loop under the run's tf.distribute strategy --
MultiWorkerMirroredStrategy across the run's processes (bench_tensorflow.distribute):
variables made in its scope, each replica's step in strategy.run, gradients all-reduced by
apply_gradients -- the binary cross-entropy averaged over the global batch with
tf.nn.compute_average_loss, and Adam's learning rate scaled by the device count."""

import keras
import tensorflow as tf
from keras import layers

from bench_shared.spec import DenseNet121 as D

from . import loop, strategy, weights


def conv(filters, kernel):
    # stride 1, "same": symmetric padding (the strided stem is padded explicitly)
    return layers.Conv2D(
        filters, kernel, padding="same", use_bias=False, kernel_initializer="he_normal"
    )


def bn():
    # running statistics with PyTorch's momentum (0.1 there, 0.9 in Keras' convention): Keras'
    # default 0.99 would still be far from the data's statistics after a short run
    return layers.BatchNormalization(epsilon=D.batch_norm_eps, momentum=0.9)


class DenseLayer(keras.layers.Layer):
    """BN-ReLU-conv1x1 (4 x growth) -> BN-ReLU-conv3x3 (growth): the block's new features."""

    def __init__(self):
        super().__init__()
        self.bn1, self.conv1 = bn(), conv(D.bottleneck_width, 1)
        self.bn2, self.conv2 = bn(), conv(D.growth_rate, 3)

    def call(self, x, training=False):
        y = self.conv1(tf.nn.relu(self.bn1(x, training=training)))
        return self.conv2(tf.nn.relu(self.bn2(y, training=training)))


class DenseBlock(keras.layers.Layer):
    def __init__(self, count):
        super().__init__()
        self.dense_layers = [DenseLayer() for _ in range(count)]

    def call(self, x, training=False):
        features = [x]  # the block's input, then every layer's output, in that order
        for layer in self.dense_layers:
            features.append(layer(tf.concat(features, -1), training=training))
        return tf.concat(features, -1)


class Transition(keras.layers.Layer):
    """BN-ReLU-conv1x1 (compression 0.5), 2x2 average pool."""

    def __init__(self, filters):
        super().__init__()
        self.bn, self.conv, self.pool = bn(), conv(filters, 1), layers.AveragePooling2D(2)

    def call(self, x, training=False):
        return self.pool(self.conv(tf.nn.relu(self.bn(x, training=training))))


class DenseNet121(keras.Model):
    def __init__(self):
        super().__init__()
        self.stem_pad = layers.ZeroPadding2D(D.stem_padding)
        self.stem_conv = layers.Conv2D(
            D.stem_channels,
            D.stem_kernel,
            D.stem_stride,
            use_bias=False,
            kernel_initializer="he_normal",
        )
        self.stem_bn = bn()
        self.pool_pad = layers.ZeroPadding2D(D.pool_padding)  # after a ReLU, zeros pad as -inf
        self.pool = layers.MaxPool2D(D.pool_kernel, D.pool_stride)
        self.blocks, self.transitions = [], []
        c = D.stem_channels
        for b, count in enumerate(D.block_layers, 1):
            self.blocks.append(DenseBlock(count))
            c += count * D.growth_rate
            if b < len(D.block_layers):
                c = int(c * D.compression)
                self.transitions.append(Transition(c))
        self.final_bn = bn()
        self.avg = layers.GlobalAveragePooling2D()
        self.classifier = layers.Dense(D.num_labels)  # logits: the loss has the sigmoid;
        # glorot-uniform kernel, zero bias: SPEC's head

    def call(self, x, training=False):
        x = tf.transpose(x, (0, 2, 3, 1))  # the X-ray pipeline's NCHW batches -> NHWC
        x = tf.nn.relu(self.stem_bn(self.stem_conv(self.stem_pad(x)), training=training))
        x = self.pool(self.pool_pad(x))
        for b, block in enumerate(self.blocks):
            x = block(x, training=training)
            if b < len(self.transitions):
                x = self.transitions[b](x, training=training)
        x = tf.nn.relu(self.final_bn(x, training=training))
        return self.classifier(self.avg(x))


def loss(labels, logits):
    """Binary cross-entropy over the 14 labels, averaged over the global batch: each replica's
    sum divided by (its batch x the replica count), summed over replicas by the all-reduce."""
    per_example = tf.reduce_mean(
        tf.nn.sigmoid_cross_entropy_with_logits(tf.cast(labels, logits.dtype), logits), axis=-1
    )
    return tf.nn.compute_average_loss(per_example)


def build_model(run):
    devices = run.get("devices", 1)
    adam = run["task"]["optimizer"]
    with strategy().scope():  # Adam's variables mirrored too (the model's: loop.Model)
        # SPEC: Adam at 1e-4 per device, the learning rate scaled linearly with the global batch
        optimizer = keras.optimizers.Adam(
            adam["lr"] * devices, beta_1=adam["beta1"], beta_2=adam["beta2"], epsilon=adam["eps"]
        )
        if run["precision"] == "fp16":
            optimizer = keras.mixed_precision.LossScaleOptimizer(optimizer)
    size = run["task"]["image_size"]
    return loop.Model(
        run, DenseNet121(), (D.input_shape[0], size, size), optimizer=optimizer, loss_fn=loss
    )


def slots(model):
    net, bn_places = model.net, weights.batch_norm_places
    places = [("stem.conv.weight", net.stem_conv.kernel)] + bn_places("stem.bn", net.stem_bn)
    for b, block in enumerate(net.blocks, 1):
        for i, layer in enumerate(block.dense_layers):
            prefix = "block%d.layer%d." % (b, i)
            for j in (1, 2):
                places += bn_places(prefix + "bn%d" % j, getattr(layer, "bn%d" % j))
                places.append((prefix + "conv%d.weight" % j, getattr(layer, "conv%d" % j).kernel))
        if b <= len(net.transitions):
            transition = net.transitions[b - 1]
            places += bn_places("transition%d.bn" % b, transition.bn)
            places.append(("transition%d.conv.weight" % b, transition.conv.kernel))
    places += bn_places("final.bn", net.final_bn)
    places += [
        ("classifier.weight", net.classifier.kernel),
        ("classifier.bias", net.classifier.bias),
    ]
    return weights.slots("densenet", places)


train_epoch = loop.train_epoch
predict = loop.predict
