"""VGG-style CIFAR-10 CNN the TensorFlow 2 way: a Keras model, a tf.function training step
with GradientTape, NHWC."""

import keras
import tensorflow as tf
from keras import layers

from bench_shared.spec import CNN

from . import loop, weights

native_layout = loop.native_layout


class VGGNet(keras.Model):
    def __init__(self, dropout):
        super().__init__()
        k, init = CNN.kernel_size, {"kernel_initializer": "glorot_uniform"}  # zero biases
        c1, c2, c3, c4 = CNN.conv_channels
        self.conv1 = layers.Conv2D(c1, k, padding="same", activation="relu", **init)
        self.conv2 = layers.Conv2D(c2, k, padding="same", **init)
        self.pool1 = layers.MaxPool2D(2)  # ReLU after the pool: cheaper
        self.drop1 = layers.Dropout(CNN.dropout[0] if dropout else 0.0)
        self.conv3 = layers.Conv2D(c3, k, padding="same", activation="relu", **init)
        self.conv4 = layers.Conv2D(c4, k, padding="same", **init)
        self.pool2 = layers.MaxPool2D(2)
        self.drop2 = layers.Dropout(CNN.dropout[1] if dropout else 0.0)
        self.flatten = layers.Flatten()  # H, W, C order: weights.py permutes the dense rows
        self.dense1 = layers.Dense(CNN.dense_units, activation="relu", **init)
        self.drop3 = layers.Dropout(CNN.dropout[2] if dropout else 0.0)
        self.dense2 = layers.Dense(CNN.num_classes, **init)

    def call(self, x, training=False):
        x = tf.nn.relu(self.pool1(self.conv2(self.conv1(x))))
        x = self.drop1(x, training=training)
        x = tf.nn.relu(self.pool2(self.conv4(self.conv3(x))))
        x = self.drop2(x, training=training)
        x = self.drop3(self.dense1(self.flatten(x)), training=training)
        return self.dense2(x)


def build_model(run):
    sgd = run["task"]["optimizer"]
    # Keras' SGD momentum (m = mu m - lr g; w += m) is heavy-ball for a constant lr
    optimizer = keras.optimizers.SGD(sgd["lr"], momentum=sgd["momentum"])
    if run["precision"] == "fp16":
        optimizer = keras.mixed_precision.LossScaleOptimizer(optimizer)
    c, h, w = CNN.input_shape
    net = VGGNet(dropout=run["task"]["dropout"])
    return loop.Model(run, net, (h, w, c), optimizer=optimizer)


def slots(model):
    net, places = model.net, []
    for i in range(1, 5):
        conv = getattr(net, "conv%d" % i)
        places += [("conv%d.weight" % i, conv.kernel), ("conv%d.bias" % i, conv.bias)]
    for i in (1, 2):
        dense = getattr(net, "dense%d" % i)
        places += [("dense%d.weight" % i, dense.kernel), ("dense%d.bias" % i, dense.bias)]
    return weights.slots("cnn", places)


train_epoch = loop.train_epoch
predict = loop.predict
