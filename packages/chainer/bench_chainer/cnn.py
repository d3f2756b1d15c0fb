"""VGG-style CIFAR-10 CNN the Chainer way: a Chain of links, define-by-run forward, MomentumSGD."""

import chainer
import chainer.functions as F
import chainer.links as L
from chainer import initializers, optimizers

from bench_shared.spec import CNN

from . import loop, weights


class VGGStyleCNN(chainer.Chain):
    def __init__(self, dropout=CNN.dropout):
        super().__init__()
        c1, c2, c3, c4 = CNN.conv_channels
        k, p = CNN.kernel_size, CNN.padding
        w = initializers.GlorotUniform()  # glorot-uniform, zero biases (SPEC rule)
        self.dropout = dropout
        with self.init_scope():
            self.conv1 = L.Convolution2D(CNN.input_shape[0], c1, k, pad=p, initialW=w)
            self.conv2 = L.Convolution2D(c1, c2, k, pad=p, initialW=w)
            self.conv3 = L.Convolution2D(c2, c3, k, pad=p, initialW=w)
            self.conv4 = L.Convolution2D(c3, c4, k, pad=p, initialW=w)
            self.dense1 = L.Linear(CNN.flat_features, CNN.dense_units, initialW=w)
            self.dense2 = L.Linear(CNN.dense_units, CNN.num_classes, initialW=w)

    def drop(self, h, ratio):
        # F.dropout is active only under chainer.config.train (train_epoch sets it)
        return F.dropout(h, ratio) if ratio else h

    def forward(self, x):
        d1, d2, d3 = self.dropout
        h = F.relu(self.conv1(x))
        # ReLU after the pool: cheaper; cover_all=False is the 2x2/2 pool (Chainer's default
        # cover_all=True is Caffe's ceil mode, the same here since 32 and 16 are even)
        h = F.relu(F.max_pooling_2d(self.conv2(h), 2, cover_all=False))
        h = self.drop(h, d1)
        h = F.relu(self.conv3(h))
        h = F.relu(F.max_pooling_2d(self.conv4(h), 2, cover_all=False))
        h = self.drop(h, d2)
        h = self.drop(F.relu(self.dense1(h)), d3)  # Linear flattens N x C x H x W in C, H, W order
        return self.dense2(h)


def build_model(run):
    dropout = CNN.dropout if run["task"]["dropout"] else (0.0, 0.0, 0.0)
    sgd = run["task"]["optimizer"]
    # Chainer's MomentumSGD: v = mu v - lr g; w += v, i.e. heavy-ball (not "unit gain")
    optimizer = optimizers.MomentumSGD(lr=sgd["lr"], momentum=sgd["momentum"])
    return loop.Model(run, VGGStyleCNN(dropout), optimizer, image_input=True)


def slots(model):
    return weights.slots("cnn")


train_epoch = loop.train_epoch
predict = loop.predict
