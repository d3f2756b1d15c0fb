"""ResNet-50 v1 features the Gluon way: the model zoo's resnet50_v1(pretrained=False).features
(no download), hybridised with a static graph; inference without autograd."""

import collections

from mxnet.gluon import nn
from mxnet.gluon.model_zoo import vision

from bench_mxnet import weights
from bench_mxnet.gluon import loop
from bench_shared.spec import ResNet50

BODY = {"conv1": 0, "bn1": 1, "conv2": 3, "bn2": 4, "conv3": 6, "bn3": 7}  # BottleneckV1.body
BN = {"gamma": "gamma", "beta": "beta", "mean": "running_mean", "var": "running_var"}


def stages(net):
    return [net[i] for i in range(4, 8)]


def build_model(run):
    # features: conv0 7x7/2, BN, ReLU, max-pool 3x3/2, stage1..4 (BottleneckV1: the stride on
    # the first 1x1 convolution, i.e. v1), global average pool -> (N, 2048, 1, 1)
    net = vision.resnet50_v1(pretrained=False).features
    net.add(nn.Flatten())  # -> (N, 2048)
    model = loop.Model(net, ResNet50.input_shape)
    # The zoo's bottleneck 1x1 convolutions carry biases that SPEC's ResNet-50 has not: zero
    # from here on (inference only), not counted, not among the tensors neutral weights fill
    excluded = [
        p
        for stage in stages(net)
        for block in stage
        for i in (0, 6)
        for p in block.body[i].params.values()
        if p.name.endswith("bias")
    ]
    for p in excluded:
        p.set_data(p.data().zeros_like())
    model.spec_excluded = {p.name for p in excluded}
    return model


def slots(model):
    """Neutral name -> Gluon Parameter name, found by structure (the zoo's names are
    counters)."""
    table = collections.OrderedDict()

    def conv_bn(conv_name, bn_name, conv, bn):
        table[conv_name + ".weight"] = weights.slot(conv_name + ".weight", conv.weight.name)
        for field, attr in BN.items():
            table[bn_name + "." + field] = weights.slot(
                bn_name + "." + field, getattr(bn, attr).name
            )

    conv_bn("stem.conv", "stem.bn", model.net[0], model.net[1])
    for s, stage in enumerate(stages(model.net), 1):
        for b, block in enumerate(stage):
            prefix = "stage%d.block%d." % (s, b)
            for i in (1, 2, 3):
                conv_bn(
                    prefix + "conv%d" % i,
                    prefix + "bn%d" % i,
                    block.body[BODY["conv%d" % i]],
                    block.body[BODY["bn%d" % i]],
                )
            if block.downsample is not None:
                conv_bn(prefix + "shortcut.conv", prefix + "shortcut.bn", *block.downsample)
    return table


predict = loop.predict
calibrate = loop.calibrate
