"""DenseNet-121 trained data-parallel the CNTK way: a cntk.layers graph (BN-ReLU-conv layers
whose inputs are `splice`s of every earlier output), a per-example binary cross-entropy on the
logits, Adam with the learning rate scaled by the device count, and CNTK's
data_parallel_distributed_learner over MPI across the run's `mpiexec` processes (each rank's
gradients summed over all ranks before every update; MPI is joined in bench_cntk.setup)."""

import collections
import math

import numpy as np

from bench_shared import distributed
from bench_shared.spec import DenseNet121 as D

from . import cntk_module, loop, weights

C = cntk_module()
L = C.layers

# PyTorch's batch-norm momentum (the reference implementation's): each step's running mean
# and variance move 10 % of the way to the batch's. CNTK states it as a time constant in
# examples instead (blend 1 - exp(-batch / constant)); see running_statistics_constant
TORCH_BN_MOMENTUM = 0.1


def running_statistics_constant(batch_size):
    """CNTK's normalization_time_constant that blends a batch of `batch_size` into the running
    statistics as PyTorch's momentum 0.1 does (CNTK's default, 5000 examples, would barely move
    them from their initial 0 and 1 in a short run)."""
    return batch_size / -math.log(1.0 - TORCH_BN_MOMENTUM)


class Builder(object):
    """Makes the layers and records which CNTK variable holds each neutral tensor (in the
    neutral layout's order)."""

    def __init__(self, time_constant):
        self.named = collections.OrderedDict()
        self.time_constant = time_constant

    def conv(self, name, cout, kernel, stride=1, padding=None):
        padding = kernel // 2 if padding is None else padding
        layer = L.Convolution2D(
            (kernel, kernel),
            cout,
            strides=stride,
            pad=loop.same_padding(kernel, padding),
            bias=False,
            init=C.he_normal(),
        )  # SPEC: He-normal over the fan-in
        self.named[name + ".weight"] = layer.W
        return layer

    def bn_relu(self, prefix):
        bn = L.BatchNormalization(
            map_rank=1, epsilon=D.batch_norm_eps, normalization_time_constant=self.time_constant
        )
        self.named[prefix + ".gamma"], self.named[prefix + ".beta"] = bn.scale, bn.bias
        self.named[prefix + ".mean"] = bn.aggregate_mean  # running statistics: Constants,
        self.named[prefix + ".var"] = bn.aggregate_variance  # not Parameters (not counted)
        return L.Sequential([bn, C.relu])

    def dense_layer(self, prefix, x):
        """BN-ReLU-conv1x1 (4 x growth) -> BN-ReLU-conv3x3 (growth): the block's new features."""
        y = self.bn_relu(prefix + "bn1")(x)
        y = self.conv(prefix + "conv1", D.bottleneck_width, 1)(y)
        y = self.bn_relu(prefix + "bn2")(y)
        # the 3x3 convolution's zero padding explicit: CNTK refuses a kernel wider than its
        # input even when padding would cover it (block 4 is 2x2 at 64 px, 1x1 at 32)
        y = C.pad(y, pattern=[(0, 0), (1, 1), (1, 1)])
        return self.conv(prefix + "conv2", D.growth_rate, 3, padding=0)(y)

    def dense_block(self, b, x, layers):
        features = [x]  # the block's input, then every layer's output, in that order
        for layer in range(layers):
            joined = C.splice(*features, axis=0) if len(features) > 1 else x
            features.append(self.dense_layer("block%d.layer%d." % (b, layer), joined))
        return C.splice(*features, axis=0)

    def transition(self, t, x, cout):
        y = self.conv("transition%d.conv" % t, cout, 1)(self.bn_relu("transition%d.bn" % t)(x))
        return L.AveragePooling((2, 2), strides=2)(y)


def densenet121(builder, x):
    """The logits of DenseNet-121 on CHW images of any side (CNTK's FreeDimension)."""
    y = builder.conv("stem.conv", D.stem_channels, D.stem_kernel, D.stem_stride, D.stem_padding)(x)
    y = builder.bn_relu("stem.bn")(y)
    y = L.MaxPooling(
        (D.pool_kernel, D.pool_kernel),
        strides=D.pool_stride,
        pad=loop.same_padding(D.pool_kernel, D.pool_padding),
    )(y)
    c = D.stem_channels
    for b, layers in enumerate(D.block_layers, 1):
        y = builder.dense_block(b, y, layers)
        c += layers * D.growth_rate
        if b < len(D.block_layers):
            c = int(c * D.compression)
            y = builder.transition(b, y, c)
    y = builder.bn_relu("final.bn")(y)
    # the spatial mean by reduce_mean: layers.GlobalAveragePooling needs a known side
    features = C.reshape(C.reduce_mean(y, axis=(1, 2)), (D.features,))
    classifier = L.Dense(D.num_labels)  # glorot-uniform, zero bias: layers' defaults, SPEC's
    builder.named["classifier.weight"], builder.named["classifier.bias"] = (
        classifier.W,
        classifier.b,
    )
    return classifier(features)  # logits; the loss applies the sigmoid


def binary_cross_entropy_with_logits(logits, targets):
    """Per example: the mean over the 14 labels of -[y log s(z) + (1 - y) log(1 - s(z))]
    = softplus(z) - y z, stable for any z (CNTK's binary_cross_entropy takes probabilities)."""
    return C.reduce_mean(C.softplus(logits) - targets * logits, axis=0)


def multi_hot(y):
    return np.ascontiguousarray(y, np.float32)


def build_model(run):
    world_size = distributed.process(run)["world_size"]
    # SPEC: Adam at 1e-4 per device, the learning rate scaled linearly with the global batch
    adam = dict(run["task"]["optimizer"], lr=run["task"]["optimizer"]["lr"] * world_size)
    local = loop.adam(adam)
    if world_size > 1:

        def learner(parameters):
            # every rank's gradient summed (MPI allreduce, 32-bit: no quantisation) before
            # each update, from the first example on. The sum over the global batch, not its
            # mean: CNTK's Adam step (per-sample rate times m / sqrt(v)) is the same for both
            return C.train.distributed.data_parallel_distributed_learner(
                local(parameters), distributed_after=0, num_quantization_bits=32
            )
    else:
        learner = local
    builder = Builder(running_statistics_constant(run["task"]["batch_size"]))
    x = C.input_variable((D.input_shape[0], C.FreeDimension, C.FreeDimension))  # CHW
    logits = densenet121(builder, x)
    for name, variable in builder.named.items():  # shapes are known once the graph is built
        if name.endswith(".var"):
            variable.value = np.ones(variable.shape, np.float32)  # CNTK starts it at 0, not 1
    return loop.Model(
        logits,
        x,
        builder.named,
        learner=learner,
        num_classes=D.num_labels,
        loss=binary_cross_entropy_with_logits,
        labels=multi_hot,
    )


def slots(model):
    return weights.slots(model.named, "densenet")


train_epoch = loop.train_epoch
predict = loop.predict
