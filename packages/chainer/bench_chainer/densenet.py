"""DenseNet-121 trained data-parallel the Chainer way: Chains of links (BN-ReLU-conv layers
whose inputs are F.concat of every earlier output), F.sigmoid_cross_entropy on the logits,
Adam with the learning rate scaled by the device count, and ChainerMN across the run's
`mpiexec` processes: create_multi_node_optimizer all-reduces (averages) the gradients over
the ranks before every update and broadcasts rank 0's weights at the first (the communicator
is created in bench_chainer.setup)."""

import chainer
import chainer.functions as F
import chainer.links as L
from chainer import initializers, optimizers

from bench_shared import distributed
from bench_shared.spec import DenseNet121 as D

from . import communicator, loop, weights


def conv(cin, cout, kernel, stride=1):
    # SPEC: He-normal over the fan-in, no bias
    return L.Convolution2D(
        cin,
        cout,
        kernel,
        stride,
        kernel // 2,
        nobias=True,
        initialW=initializers.HeNormal(fan_option="fan_in"),
    )


def bn(channels):
    # decay 0.9: running statistics move 10 % of the way per step, as PyTorch's momentum 0.1
    return L.BatchNormalization(channels, eps=D.batch_norm_eps, decay=0.9)


class DenseLayer(chainer.Chain):
    """BN-ReLU-conv1x1 (4 x growth) -> BN-ReLU-conv3x3 (growth): the block's new features."""

    def __init__(self, cin):
        super().__init__()
        with self.init_scope():
            self.bn1, self.conv1 = bn(cin), conv(cin, D.bottleneck_width, 1)
            self.bn2 = bn(D.bottleneck_width)
            self.conv2 = conv(D.bottleneck_width, D.growth_rate, 3)

    def forward(self, x):
        return self.conv2(F.relu(self.bn2(self.conv1(F.relu(self.bn1(x))))))


class DenseBlock(chainer.Chain):
    def __init__(self, cin, layers):
        super().__init__()
        self.layers = layers
        with self.init_scope():
            for i in range(layers):
                setattr(self, "layer%d" % i, DenseLayer(cin + i * D.growth_rate))

    def forward(self, x):
        features = [x]  # the block's input, then every layer's output, in that order
        for i in range(self.layers):
            features.append(getattr(self, "layer%d" % i)(F.concat(features, axis=1)))
        return F.concat(features, axis=1)


class Transition(chainer.Chain):
    def __init__(self, cin, cout):
        super().__init__()
        with self.init_scope():
            self.bn, self.conv = bn(cin), conv(cin, cout, 1)

    def forward(self, x):
        return F.average_pooling_2d(self.conv(F.relu(self.bn(x))), 2, 2)


class Stem(chainer.Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.conv = L.Convolution2D(
                D.input_shape[0],
                D.stem_channels,
                D.stem_kernel,
                D.stem_stride,
                D.stem_padding,
                nobias=True,
                initialW=initializers.HeNormal(fan_option="fan_in"),
            )
            self.bn = bn(D.stem_channels)

    def forward(self, x):
        h = F.relu(self.bn(self.conv(x)))
        return F.max_pooling_2d(
            h, D.pool_kernel, D.pool_stride, D.pool_padding, cover_all=False
        )  # PyTorch's (floor) output size


class Final(chainer.Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.bn = bn(D.features)

    def forward(self, x):
        return F.mean(F.relu(self.bn(x)), axis=(2, 3))  # global average pool


class DenseNet121(chainer.Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.stem = Stem()
            c = D.stem_channels
            for b, layers in enumerate(D.block_layers, 1):
                setattr(self, "block%d" % b, DenseBlock(c, layers))
                c += layers * D.growth_rate
                if b < len(D.block_layers):
                    setattr(self, "transition%d" % b, Transition(c, int(c * D.compression)))
                    c = int(c * D.compression)
            self.final = Final()
            # logits; the loss applies the sigmoid. SPEC: glorot-uniform, zero bias
            self.classifier = L.Linear(
                D.features, D.num_labels, initialW=initializers.GlorotUniform(), initial_bias=0
            )

    def forward(self, x):
        h = self.stem(x)
        for b in range(1, len(D.block_layers) + 1):
            h = getattr(self, "block%d" % b)(h)
            if b < len(D.block_layers):
                h = getattr(self, "transition%d" % b)(h)
        return self.classifier(self.final(h))


def mean_binary_cross_entropy(logits, labels):
    """The mean over the batch and the 14 labels (normalize=True: over every element)."""
    return F.sigmoid_cross_entropy(logits, labels, normalize=True)


def build_model(run):
    world_size = distributed.process(run)["world_size"]
    adam = run["task"]["optimizer"]
    # SPEC: Adam at 1e-4 per device, the learning rate scaled linearly with the global batch.
    # Chainer's eps acts as eps / sqrt(1 - beta2^t): see rnn.py
    optimizer = optimizers.Adam(
        alpha=adam["lr"] * world_size, beta1=adam["beta1"], beta2=adam["beta2"], eps=adam["eps"]
    )
    if world_size > 1:
        # ChainerMN: gradients averaged over the ranks (allreduce) before each update; rank
        # 0's weights broadcast to every rank at the first
        import chainermn

        optimizer = chainermn.create_multi_node_optimizer(optimizer, communicator())
    return loop.Model(
        run, DenseNet121(), optimizer, image_input=True, loss_fn=mean_binary_cross_entropy
    )


def slots(model):
    return weights.slots("densenet")


train_epoch = loop.train_epoch
predict = loop.predict
