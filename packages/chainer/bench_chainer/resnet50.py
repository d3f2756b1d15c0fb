"""ResNet-50 v1 features the Chainer way: Chainer's own ResNet bottleneck blocks in a Chain, run
under chainer.using_config('train', False) and no_backprop_mode.

Not L.ResNet50Layers itself, which follows the Caffe model and differs from SPEC in three
places: its stem convolution has a bias (+64 parameters), its 3x3/2 max-pool has no padding and
Caffe's ceil mode (cover_all, other windows: other features), and its batch norm uses
Chainer's eps 2e-5 (SPEC: 1e-5). Its building blocks (the same link names, res2..res5 with
a, b1, b2, ...) are used unchanged: MSRA v1, stride on the first 1x1, no convolution biases.
"""

import chainer
import chainer.functions as F
import chainer.links as L
from chainer import initializers
from chainer.links.model.vision.resnet import BuildingBlock

from bench_shared.spec import ResNet50

from . import loop, weights


class ResNet50Features(chainer.Chain):
    def __init__(self):
        super().__init__()
        stem = ResNet50.stem_channels
        he = initializers.HeNormal()  # He init keeps activations of random weights in range
        with self.init_scope():
            self.conv1 = L.Convolution2D(
                ResNet50.input_shape[0],
                stem,
                ResNet50.stem_kernel,
                ResNet50.stem_stride,
                ResNet50.stem_padding,
                initialW=he,
                nobias=True,
            )
            self.bn1 = L.BatchNormalization(stem)
            cin = stem
            for s, (blocks, width, cout, stride) in enumerate(ResNet50.stages, 2):
                setattr(
                    self,
                    "res%d" % s,
                    BuildingBlock(
                        blocks, cin, width, cout, stride, initialW=he, downsample_fb=False
                    ),
                )
                cin = cout
        for link in self.links():
            if isinstance(link, L.BatchNormalization):
                link.eps = ResNet50.batch_norm_eps  # Chainer's default is 2e-5

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = F.max_pooling_2d(
            h,
            ResNet50.pool_kernel,
            stride=ResNet50.pool_stride,
            pad=ResNet50.pool_padding,
            cover_all=False,
        )
        h = self.res5(self.res4(self.res3(self.res2(h))))
        return F.mean(h, axis=(2, 3))  # global average pool


def build_model(run):
    return loop.Model(run, ResNet50Features(), image_input=True)


def slots(model):
    return weights.slots("resnet50")


predict = loop.predict
