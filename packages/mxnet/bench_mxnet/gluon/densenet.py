"""DenseNet-121 trained data-parallel the Gluon way: HybridBlocks hybridised with a static graph,
SigmoidBinaryCrossEntropyLoss over the 14 labels (from logits), Adam with the learning rate
scaled by the device count, and multi-context training: the parameters live on every context
of the run (mx.cpu(0..N-1), mx.gpu(0..N-1)), each global batch is cut by
gluon.utils.split_and_load, and the Trainer's kvstore sums the gradients (bench_mxnet.gluon
.loop). Written by hand: the model zoo's densenet121 ends in a fixed 7 x 7 average pool, which
only a 224 x 224 input fits (the tests use smaller sides)."""

import collections

from mxnet.gluon import loss, nn

from bench_mxnet import initialisers, runtime, weights
from bench_mxnet.gluon import loop
from bench_shared import weights as neutral
from bench_shared.spec import DenseNet121 as D

BN = {"gamma": "gamma", "beta": "beta", "mean": "running_mean", "var": "running_var"}


def conv(cin, cout, kernel, stride=1, prefix=None):
    return nn.Conv2D(
        cout,
        kernel,
        stride,
        padding=kernel // 2,
        use_bias=False,
        in_channels=cin,
        weight_initializer=initialisers.HE_NORMAL,
        prefix=prefix,
    )


def bn(channels, prefix):
    # momentum 0.9 in MXNet's convention (running = 0.9 running + 0.1 batch): PyTorch's 0.1
    return nn.BatchNorm(epsilon=D.batch_norm_eps, in_channels=channels, prefix=prefix)


class DenseLayer(nn.HybridBlock):
    """BN-ReLU-conv1x1 (4 x growth) -> BN-ReLU-conv3x3 (growth): the block's new features."""

    def __init__(self, cin, **kwargs):
        super(DenseLayer, self).__init__(**kwargs)
        with self.name_scope():
            self.bn1 = bn(cin, "bn1_")
            self.conv1 = conv(cin, D.bottleneck_width, 1, prefix="conv1_")
            self.bn2 = bn(D.bottleneck_width, "bn2_")
            self.conv2 = conv(D.bottleneck_width, D.growth_rate, 3, prefix="conv2_")

    def hybrid_forward(self, F, x):
        x = self.conv1(F.relu(self.bn1(x)))
        return self.conv2(F.relu(self.bn2(x)))


class DenseBlock(nn.HybridBlock):
    def __init__(self, cin, layers, **kwargs):
        super(DenseBlock, self).__init__(**kwargs)
        with self.name_scope():
            for i in range(layers):
                setattr(
                    self, "layer%d" % i, DenseLayer(cin + i * D.growth_rate, prefix="layer%d_" % i)
                )
        self.depth = layers

    def hybrid_forward(self, F, x):
        features = [x]  # the block's input, then every layer's output, in that order
        for i in range(self.depth):
            features.append(getattr(self, "layer%d" % i)(F.concat(*features, dim=1)))
        return F.concat(*features, dim=1)


class Transition(nn.HybridBlock):
    def __init__(self, cin, cout, **kwargs):
        super(Transition, self).__init__(**kwargs)
        with self.name_scope():
            self.bn, self.conv = bn(cin, "bn_"), conv(cin, cout, 1, prefix="conv_")

    def hybrid_forward(self, F, x):
        return F.Pooling(
            self.conv(F.relu(self.bn(x))), kernel=(2, 2), stride=(2, 2), pool_type="avg"
        )


class DenseNet121(nn.HybridBlock):
    """Parameter names follow the neutral ones: block1_layer0_bn1_gamma is block1.layer0.bn1.gamma
    (batch norm's running statistics: _running_mean, _running_var)."""

    def __init__(self, **kwargs):
        super(DenseNet121, self).__init__(prefix="", **kwargs)
        with self.name_scope():
            self.stem_conv = conv(
                D.input_shape[0], D.stem_channels, D.stem_kernel, D.stem_stride, prefix="stem_conv_"
            )
            self.stem_bn = bn(D.stem_channels, "stem_bn_")
            self.stages = []  # names of the dense blocks and transitions, in order
            c = D.stem_channels
            for b, layers in enumerate(D.block_layers, 1):
                self.stages.append("block%d" % b)
                setattr(self, "block%d" % b, DenseBlock(c, layers, prefix="block%d_" % b))
                c += layers * D.growth_rate
                if b < len(D.block_layers):
                    self.stages.append("transition%d" % b)
                    setattr(
                        self,
                        "transition%d" % b,
                        Transition(c, int(c * D.compression), prefix="transition%d_" % b),
                    )
                    c = int(c * D.compression)
            self.final_bn = bn(c, "final_bn_")
            # logits; the loss has the sigmoid. SPEC's head: glorot-uniform, zero bias
            self.classifier = nn.Dense(
                D.num_labels,
                in_units=D.features,
                weight_initializer=initialisers.GLOROT_UNIFORM,
                prefix="classifier_",
            )

    def hybrid_forward(self, F, x):
        x = F.relu(self.stem_bn(self.stem_conv(x)))
        x = F.Pooling(
            x,
            kernel=(D.pool_kernel,) * 2,
            stride=(D.pool_stride,) * 2,
            pad=(D.pool_padding,) * 2,
            pool_type="max",
        )
        for stage in self.stages:
            x = getattr(self, stage)(x)
        x = F.Pooling(F.relu(self.final_bn(x)), global_pool=True, kernel=(1, 1), pool_type="avg")
        return self.classifier(F.flatten(x))


def build_model(run):
    devices = run.get("devices", 1)
    adam = run["task"]["optimizer"]
    side = run["task"]["image_size"]
    # SPEC: Adam at 1e-4 per device, the learning rate scaled linearly with the global batch
    return loop.Model(
        DenseNet121(),
        (D.input_shape[0], side, side),
        "adam",
        {
            "learning_rate": adam["lr"] * devices,
            "beta1": adam["beta1"],
            "beta2": adam["beta2"],
            "epsilon": adam["eps"],
        },
        loss_fn=loss.SigmoidBinaryCrossEntropyLoss(from_sigmoid=False),
        contexts=runtime.contexts(),
    )


def gluon_name(name):
    prefix, field = name.rsplit(".", 1)
    return prefix.replace(".", "_") + "_" + BN.get(field, field)


def slots(model):
    """Neutral name -> Gluon Parameter name: block1.layer0.bn1.mean is
    block1_layer0_bn1_running_mean, and so on."""
    return collections.OrderedDict(
        (name, weights.slot(name, gluon_name(name))) for name in neutral.layout("densenet")
    )


train_epoch = loop.train_epoch
predict = loop.predict
