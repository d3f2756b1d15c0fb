"""DenseNet-121 the Keras way: a functional model (NHWC), compile, fit, predict; binary
cross-entropy on logits, Adam. Layers are named as the neutral weights (bench_shared.weights).

The same file on each backend; what differs is who trains it on N devices:
- JAX (framework=keras_jax): data-parallel by Keras 3's own distribution API. With devices=N,
  backend_jax.configure sets keras.distribution.DataParallel before this model is built (on a
  CPU over N XLA host devices, one process); fit shards each global batch of N x 64 over them
  and XLA partitions the jitted step. Nothing here changes: the loss is the global batch's
  mean and Adam's lr is SPEC's 1e-4 x devices, as on every framework.
- TensorFlow (framework=keras): one device. Keras 3.15's own training API does not run under
  MultiWorkerMirroredStrategy (its step reduces the scalar loss with strategy.reduce("MEAN",
  axis=0), which fails: "Invalid reduction dimension 0 for input with 0 dimensions",
  tensorflow/tensorflow#72388), and under MirroredStrategy fit first pulls a batch from the
  epoch's iterator to build the model (Keras' _maybe_symbolic_build), a step lost or the
  shared batch order iterated twice. framework=tensorflow trains it data-parallel with
  tf.distribute. Keras 3.15's distribution API runs on JAX only (keras/src/backend/
  tensorflow/distribution_lib.py is a DTensor prototype marked "DO NOT USE").
- PyTorch (framework=keras_torch): not declared. Keras' torch backend keeps a layer's
  variables in a torch.nn.ParameterDict keyed by their paths (keras/src/backend/torch/
  layer.py), and torch refuses keys with a ".": the neutral layer names below fail at build
  ("parameter name can't contain '.'"); and its distribution_lib is None
  (keras/src/backend/__init__.py: no DataParallel on torch)."""

import keras
from keras import layers

from bench_shared import weights as neutral
from bench_shared.spec import DenseNet121 as D

from . import loop, weights


def conv(x, filters, kernel, name):
    return layers.Conv2D(
        filters, kernel, padding="same", use_bias=False, kernel_initializer="he_normal", name=name
    )(x)


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
    x = layers.Conv2D(
        D.stem_channels,
        D.stem_kernel,
        D.stem_stride,
        use_bias=False,
        kernel_initializer="he_normal",
        name="stem.conv",
    )(x)
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
    adam = run["task"]["optimizer"]
    optimizer = keras.optimizers.Adam(
        adam["lr"] * run.get("devices", 1),
        beta_1=adam["beta1"],
        beta_2=adam["beta2"],
        epsilon=adam["eps"],
    )  # SPEC: x devices
    # mean over the labels and the batch
    return loop.compile_model(
        densenet121(), optimizer, keras.losses.BinaryCrossentropy(from_logits=True)
    )


def slots(model):
    places = []
    for name in neutral.layout("densenet"):
        layer_name, field = name.rsplit(".", 1)
        layer = model.get_layer(layer_name)
        variable = {
            "weight": "kernel",
            "bias": "bias",
            "gamma": "gamma",
            "beta": "beta",
            "mean": "moving_mean",
            "var": "moving_variance",
        }[field]
        places.append((name, getattr(layer, variable)))
    return weights.slots("densenet", places)


train_epoch = loop.train_epoch
train = loop.train  # every epoch in one fit
predict = loop.predict
