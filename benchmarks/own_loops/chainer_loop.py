"""The 2018 benchmark's Chainer_CNN loop for SPEC's CNN: a Chain of Convolution2D and Linear
links, MomentumSGD, and per shuffled minibatch of numpy arrays: forward, softmax cross-entropy,
cleargrads, backward, update, under chainer.using_config("train", True). The yardstick
framework=chainer task=cnn (Chainer on NumPy) is measured against by benchmarks/own_loops.py.
Prints one JSON line: the seconds of each epoch."""

import time

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
from chainer import optimizers
from common import arguments, minibatches, print_result


class SymbolModule(chainer.Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.conv1 = L.Convolution2D(3, 50, ksize=3, pad=1)
            self.conv2 = L.Convolution2D(50, 50, ksize=3, pad=1)
            self.conv3 = L.Convolution2D(50, 100, ksize=3, pad=1)
            self.conv4 = L.Convolution2D(100, 100, ksize=3, pad=1)
            self.fc1 = L.Linear(100 * 8 * 8, 512)
            self.fc2 = L.Linear(512, 10)

    def __call__(self, x):
        h = F.relu(self.conv1(x))
        h = F.dropout(F.relu(F.max_pooling_2d(self.conv2(h), ksize=2, stride=2)), 0.25)
        h = F.relu(self.conv3(h))
        h = F.dropout(F.relu(F.max_pooling_2d(self.conv4(h), ksize=2, stride=2)), 0.25)
        h = F.dropout(F.relu(self.fc1(h)), 0.5)
        return self.fc2(h)


def main():
    args = arguments(["cnn"])
    rng = np.random.RandomState(args.seed)
    x = rng.uniform(0, 1, (args.examples, 3, 32, 32)).astype(np.float32)
    y = rng.randint(0, 10, args.examples).astype(np.int32)
    sym = SymbolModule()
    optimizer = optimizers.MomentumSGD(lr=0.01, momentum=0.9)
    optimizer.setup(sym)
    seconds = []
    with chainer.using_config("train", True):
        for _ in range(args.epochs):
            start = time.perf_counter()
            for data, target in minibatches(x, y, args.batch_size, rng):
                loss = F.softmax_cross_entropy(sym(data), target)
                sym.cleargrads()
                loss.backward()
                optimizer.update()
            seconds.append(time.perf_counter() - start)
    print_result(
        "chainer (the 2018 Chainer_CNN loop)",
        args.task,
        epoch_seconds=seconds,
        examples_per_epoch=args.examples // args.batch_size * args.batch_size,
    )


if __name__ == "__main__":
    main()
