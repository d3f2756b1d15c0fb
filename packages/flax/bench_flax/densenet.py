"""DenseNet-121 trained data-parallel the JAX way: nnx modules (NHWC), sigmoid binary
cross-entropy on the logits over the 14 labels, optax Adam with the learning rate scaled by the
device count, and for devices=N one process driving N devices: the state replicated over a
jax.sharding.Mesh and every global batch sharded along its batch axis (NamedSharding), so that
the one jitted step with donated buffers (bench_flax.loop) runs data-parallel and XLA adds
the all-reduces itself (GSPMD). On a CPU the N devices are XLA host-platform devices
(bench_flax.setup) sharing one thread pool. Batch norm then normalises over the global batch
(its statistics all-reduced too: synchronised batch norm), not per device as PyTorch's DDP."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

from bench_shared.spec import DenseNet121 as D

from . import devices, loop, weights


def conv(cin, cout, kernel, rngs, stride=1):
    # padding kernel // 2 on every side, as SPEC's (not "SAME", lopsided at stride 2)
    return nnx.Conv(
        cin,
        cout,
        (kernel, kernel),
        stride,
        padding=kernel // 2,
        use_bias=False,
        kernel_init=nnx.initializers.he_normal(),
        rngs=rngs,
        **loop.layer_options(),
    )


def bn(channels, rngs):
    # running statistics with PyTorch's momentum (0.1 there, 0.9 in Flax's convention): Flax's
    # default 0.99 would still be far from the data's statistics after a short run
    return nnx.BatchNorm(
        channels, momentum=0.9, epsilon=D.batch_norm_eps, rngs=rngs, **loop.layer_options()
    )


class Stem(nnx.Module):
    """conv7x7/2 -> BN-ReLU -> max pool 3x3/2."""

    def __init__(self, rngs):
        self.conv = conv(D.input_shape[0], D.stem_channels, D.stem_kernel, rngs, D.stem_stride)
        self.bn = bn(D.stem_channels, rngs)

    def __call__(self, x):
        x = nnx.relu(self.bn(self.conv(x)))
        return nnx.max_pool(
            x, (D.pool_kernel,) * 2, (D.pool_stride,) * 2, padding=((D.pool_padding,) * 2,) * 2
        )  # pads with -inf


class DenseLayer(nnx.Module):
    """BN-ReLU-conv1x1 (4 x growth) -> BN-ReLU-conv3x3 (growth): the block's new features."""

    def __init__(self, cin, rngs):
        self.bn1, self.conv1 = bn(cin, rngs), conv(cin, D.bottleneck_width, 1, rngs)
        self.bn2, self.conv2 = (
            bn(D.bottleneck_width, rngs),
            conv(D.bottleneck_width, D.growth_rate, 3, rngs),
        )

    def __call__(self, x):
        return self.conv2(nnx.relu(self.bn2(self.conv1(nnx.relu(self.bn1(x))))))


class DenseBlock(nnx.Module):
    def __init__(self, cin, layers, rngs):
        self.depth = layers
        for i in range(layers):
            setattr(self, "layer%d" % i, DenseLayer(cin + i * D.growth_rate, rngs))

    def __call__(self, x):
        features = [x]  # the block's input, then every layer's output, in that order
        for i in range(self.depth):
            features.append(getattr(self, "layer%d" % i)(jnp.concatenate(features, -1)))
        return jnp.concatenate(features, -1)


class Transition(nnx.Module):
    def __init__(self, cin, cout, rngs):
        self.bn, self.conv = bn(cin, rngs), conv(cin, cout, 1, rngs)

    def __call__(self, x):
        return nnx.avg_pool(self.conv(nnx.relu(self.bn(x))), (2, 2), (2, 2))


class Final(nnx.Module):
    """BN-ReLU -> global average pool: 1024 features."""

    def __init__(self, channels, rngs):
        self.bn = bn(channels, rngs)

    def __call__(self, x):
        return nnx.relu(self.bn(x)).mean(axis=(1, 2))


class DenseNet121(nnx.Module):
    def __init__(self, rngs):
        self.stem = Stem(rngs)
        c = D.stem_channels
        for b, layers in enumerate(D.block_layers, 1):
            setattr(self, "block%d" % b, DenseBlock(c, layers, rngs))
            c += layers * D.growth_rate
            if b < len(D.block_layers):
                setattr(self, "transition%d" % b, Transition(c, int(c * D.compression), rngs))
                c = int(c * D.compression)
        self.final = Final(c, rngs)
        # logits (the loss has the sigmoid); SPEC's head: glorot-uniform, zero bias
        self.classifier = nnx.Linear(
            D.features,
            D.num_labels,
            rngs=rngs,
            kernel_init=nnx.initializers.glorot_uniform(),
            **loop.layer_options(),
        )

    def __call__(self, x):
        # the X-ray pipeline's NCHW batches -> NHWC inside the jitted program (XLA fuses it)
        x = jnp.transpose(x, (0, 2, 3, 1))
        x = self.stem(x)
        for b in range(1, len(D.block_layers) + 1):
            x = getattr(self, "block%d" % b)(x)
            if b < len(D.block_layers):
                x = getattr(self, "transition%d" % b)(x)
        return self.classifier(self.final(x))


def bce_with_logits(logits, y):
    """Binary cross-entropy on the logits, mean over the labels and the batch."""
    return optax.sigmoid_binary_cross_entropy(logits, y).mean()


def build_model(run):
    n = run.get("devices", 1)
    adam = run["task"]["optimizer"]
    # SPEC: Adam at 1e-4 per device, the learning rate scaled linearly with the global batch
    tx = optax.adam(adam["lr"] * n, b1=adam["beta1"], b2=adam["beta2"], eps=adam["eps"])
    # devices=N: a one-axis Mesh of the run's N devices; loop.train_epoch replicates the
    # state over it and shards each global batch along "batch" (jax.sharding.NamedSharding)
    mesh = jax.sharding.Mesh(np.array(devices()), ("batch",)) if n > 1 else None
    return loop.Model(
        DenseNet121(loop.rngs()), tx, loss=bce_with_logits, label_dtype=np.float32, mesh=mesh
    )


def slots(model):
    return weights.slots("densenet")


train_epoch = loop.train_epoch
predict = loop.predict
