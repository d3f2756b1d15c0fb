"""VGG-style CIFAR-10 CNN the Flax NNX way: nnx.Module layers, NHWC, a jax.jit training step
with donated buffers, optax.sgd with heavy-ball momentum."""

import functools

import optax
from flax import nnx

from bench_shared.spec import CNN

from . import loop, weights

native_layout = loop.native_layout
# fans over the receptive field (SPEC's rule); biases: Flax's default, zeros
GLOROT = nnx.initializers.glorot_uniform()


class VGGNet(nnx.Module):
    def __init__(self, dropout, rngs):
        c1, c2, c3, c4 = CNN.conv_channels
        d1, d2, d3 = CNN.dropout if dropout else (0.0, 0.0, 0.0)
        conv = functools.partial(
            nnx.Conv,
            kernel_size=(CNN.kernel_size,) * 2,
            padding=CNN.padding,
            kernel_init=GLOROT,
            rngs=rngs,
            **loop.layer_options(),
        )
        dense = functools.partial(nnx.Linear, kernel_init=GLOROT, rngs=rngs, **loop.layer_options())
        self.conv1, self.conv2 = conv(CNN.input_shape[0], c1), conv(c1, c2)
        self.drop1 = nnx.Dropout(d1, rngs=rngs)
        self.conv3, self.conv4 = conv(c2, c3), conv(c3, c4)
        self.drop2 = nnx.Dropout(d2, rngs=rngs)
        self.dense1 = dense(CNN.flat_features, CNN.dense_units)
        self.drop3 = nnx.Dropout(d3, rngs=rngs)
        self.dense2 = dense(CNN.dense_units, CNN.num_classes)

    def __call__(self, x):
        pool = functools.partial(nnx.max_pool, window_shape=(2, 2), strides=(2, 2))
        x = nnx.relu(pool(self.conv2(nnx.relu(self.conv1(x)))))  # ReLU after the pool: cheaper
        x = self.drop1(x)
        x = nnx.relu(pool(self.conv4(nnx.relu(self.conv3(x)))))
        x = self.drop2(x)
        x = x.reshape(x.shape[0], -1)  # H, W, C order: weights.py permutes dense1's rows
        x = self.drop3(nnx.relu(self.dense1(x)))
        return self.dense2(x)


def build_model(run):
    sgd = run["task"]["optimizer"]
    # optax.sgd's momentum is optax.trace: v = mu v + g; w -= lr v (heavy-ball, like
    # torch.optim.SGD with dampening 0; Nesterov off)
    tx = optax.sgd(sgd["lr"], momentum=sgd["momentum"], nesterov=False)
    return loop.Model(VGGNet(run["task"]["dropout"], loop.rngs()), tx)


def slots(model):
    return weights.slots("cnn")


train_epoch = loop.train_epoch
predict = loop.predict
