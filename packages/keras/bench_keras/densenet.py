"""DenseNet-121 trained data-parallel the Keras way: a functional model (NHWC) built and
compiled in the scope of the run's tf.distribute strategy -- MultiWorkerMirroredStrategy
across the run's processes (bench_tensorflow.distribute, on the TensorFlow backend: Keras'
fit runs each replica's step and all-reduces the gradients) -- binary cross-entropy on
logits, Adam's learning rate scaled by the device count, and model.fit on each process's own
dataset (distribute_datasets_from_function: its shard as it is, not resharded or
rebatched). Layers are named as the neutral weights (bench_shared.weights)."""
import keras
import numpy as np
import tensorflow as tf
from keras import layers

from bench_shared import weights as neutral
from bench_shared.spec import DenseNet121 as D

from . import backend, common, weights


def conv(x, filters, kernel, name):
    return layers.Conv2D(filters, kernel, padding="same", use_bias=False,
                         kernel_initializer="he_normal", name=name)(x)


def bn_relu(x, name):
    # running statistics with PyTorch's momentum (0.1 there, 0.9 in Keras' convention): Keras'
    # default 0.99 would still be far from the data's statistics after a short run
    x = layers.BatchNormalization(epsilon=D.batch_norm_eps, momentum=0.9, name=name)(x)
    return layers.Activation("relu")(x)


def dense_block(x, block, count):
    for i in range(count):  # BN-ReLU-conv1x1 (4 x growth) -> BN-ReLU-conv3x3 (growth), appended
        prefix = "block%d.layer%d." % (block, i)
        y = conv(bn_relu(x, prefix + "bn1"), D.bottleneck_width, 1, prefix + "conv1")
        y = conv(bn_relu(y, prefix + "bn2"), D.growth_rate, 3, prefix + "conv2")
        x = layers.Concatenate()([x, y])
    return x


def densenet121():
    inputs = keras.Input((D.input_shape[0], None, None))  # any side of 32 or more
    x = layers.Permute((2, 3, 1))(inputs)  # the X-ray pipeline's NCHW batches -> NHWC
    x = layers.ZeroPadding2D(D.stem_padding)(x)  # symmetric, as SPEC's (not "same" at stride 2)
    x = layers.Conv2D(D.stem_channels, D.stem_kernel, D.stem_stride, use_bias=False,
                      kernel_initializer="he_normal", name="stem.conv")(x)
    x = bn_relu(x, "stem.bn")
    x = layers.MaxPool2D(D.pool_kernel, D.pool_stride)(layers.ZeroPadding2D(D.pool_padding)(x))
    c = D.stem_channels
    for b, count in enumerate(D.block_layers, 1):
        x = dense_block(x, b, count)
        c += count * D.growth_rate
        if b < len(D.block_layers):  # transition: BN-ReLU-conv1x1 (compression), 2x2 avg pool
            c = int(c * D.compression)
            x = conv(bn_relu(x, "transition%d.bn" % b), c, 1, "transition%d.conv" % b)
            x = layers.AveragePooling2D(2)(x)
    x = layers.GlobalAveragePooling2D()(bn_relu(x, "final.bn"))
    # logits in float32 (the loss has the sigmoid); glorot-uniform kernel, zero bias: SPEC's
    outputs = layers.Dense(D.num_labels, dtype="float32", name="classifier")(x)
    return keras.Model(inputs, outputs, name="densenet121")


def build_model(run):
    devices = run.get("devices", 1)
    adam = run["task"]["optimizer"]
    with backend().strategy().scope():  # the variables, Adam's and compile's: mirrored
        model = densenet121()
        # SPEC: Adam at 1e-4 per device, the learning rate scaled linearly with the global batch
        optimizer = keras.optimizers.Adam(adam["lr"] * devices, beta_1=adam["beta1"],
                                          beta_2=adam["beta2"], epsilon=adam["eps"])
        # mean over the labels and the batch; under a strategy, over the global batch
        return common.compile_model(model, optimizer,
                                    keras.losses.BinaryCrossentropy(from_logits=True))


def slots(model):
    places = []
    for name in neutral.layout("densenet"):
        layer_name, field = name.rsplit(".", 1)
        layer = model.get_layer(layer_name)
        variable = {"weight": "kernel", "bias": "bias", "gamma": "gamma", "beta": "beta",
                    "mean": "moving_mean", "var": "moving_variance"}[field]
        places.append((name, getattr(layer, variable)))
    return weights.slots("densenet", places)


def train_epoch(model, batches):
    """model.fit over this process's batches, as one dataset per process."""
    signature = (tf.TensorSpec((None, D.input_shape[0], None, None), tf.float32),
                 tf.TensorSpec((None, D.num_labels), tf.float32))

    def dataset(context):
        return tf.data.Dataset.from_generator(
            lambda: ((x, np.asarray(y, np.float32)) for x, y in batches),
            output_signature=signature)
    data = model.distribute_strategy.distribute_datasets_from_function(dataset)
    history = model.fit(data, epochs=1, steps_per_epoch=len(batches), verbose=0, shuffle=False)
    return history.history["loss"][-1]


def predict(model, batches):
    if model.distribute_strategy.num_replicas_in_sync == 1:
        return common.predict(model, batches)
    # rank 0 evaluates alone: model.predict under MultiWorkerMirroredStrategy gathers every
    # worker's outputs (a collective the other ranks never join); the model's call does not
    return np.concatenate([keras.ops.convert_to_numpy(model(x, training=False))
                           for x in batches]).astype("float32")
