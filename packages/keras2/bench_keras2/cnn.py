"""VGG-style CIFAR-10 CNN the Keras 2 way: Sequential, compile, fit, predict (NCHW,
channels_first: both backends' native layout)."""

import keras
from keras import layers

from bench_shared.spec import CNN

from . import loop, weights


def build_model(run):
    k, (c1, c2, c3, c4) = CNN.kernel_size, CNN.conv_channels
    d1, d2, d3 = CNN.dropout if run["task"]["dropout"] else (0.0, 0.0, 0.0)
    model = keras.Sequential(
        [
            layers.Conv2D(
                c1, k, padding="same", activation="relu", name="conv1", input_shape=CNN.input_shape
            ),  # (C, H, W): channels_first (setup)
            layers.Conv2D(c2, k, padding="same", name="conv2"),
            layers.MaxPooling2D(2),
            layers.Activation("relu"),  # ReLU after the pool: cheaper
            layers.Dropout(d1),
            layers.Conv2D(c3, k, padding="same", activation="relu", name="conv3"),
            layers.Conv2D(c4, k, padding="same", name="conv4"),
            layers.MaxPooling2D(2),
            layers.Activation("relu"),
            layers.Dropout(d2),
            # the NCHW map flattened as it lies (C, H, W rows, the neutral order): Keras 2's
            # channels_first Flatten would transpose it to H, W, C first, every step
            layers.Flatten(data_format="channels_last"),
            layers.Dense(CNN.dense_units, activation="relu", name="dense1"),
            layers.Dropout(d3),
            layers.Dense(CNN.num_classes, name="dense2"),  # logits
        ],
        name="vgg_cnn",
    )  # Keras' defaults: glorot-uniform kernels, zero biases (SPEC rule)
    sgd = run["task"]["optimizer"]
    # Keras' SGD momentum (m = mu m - lr g; w += m) is heavy-ball for a constant lr
    return loop.compile_model(model, keras.optimizers.SGD(sgd["lr"], momentum=sgd["momentum"]))


def slots(model):
    places = []
    for name in ("conv1", "conv2", "conv3", "conv4", "dense1", "dense2"):
        layer = model.get_layer(name)
        places += [(name + ".weight", layer.kernel), (name + ".bias", layer.bias)]
    return weights.slots("cnn", places)


train_epoch = loop.train_epoch
train = loop.train  # every epoch in one fit
predict = loop.predict
