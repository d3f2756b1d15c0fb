"""Flax's own example loop (the Flax NNX MNIST tutorial's layout: an nnx.Module, an
nnx.Optimizer over optax, an @nnx.jit train step with nnx.value_and_grad, numpy batches fed
from host memory) for SPEC's CNN shapes: the yardstick framework=flax is measured against by
benchmarks/own_loops.py. Prints one JSON line: the seconds of each epoch."""

import time

import jax
import numpy as np
import optax
from common import arguments, print_result
from flax import nnx


class CNN(nnx.Module):
    """SPEC's VGG-style CNN, NHWC, written as the tutorial writes its CNN."""

    def __init__(self, *, rngs):
        self.conv1 = nnx.Conv(3, 50, kernel_size=(3, 3), rngs=rngs)
        self.conv2 = nnx.Conv(50, 50, kernel_size=(3, 3), rngs=rngs)
        self.conv3 = nnx.Conv(50, 100, kernel_size=(3, 3), rngs=rngs)
        self.conv4 = nnx.Conv(100, 100, kernel_size=(3, 3), rngs=rngs)
        self.dropout1 = nnx.Dropout(0.25, rngs=rngs)
        self.dropout2 = nnx.Dropout(0.25, rngs=rngs)
        self.dropout3 = nnx.Dropout(0.5, rngs=rngs)
        self.linear1 = nnx.Linear(8 * 8 * 100, 512, rngs=rngs)
        self.linear2 = nnx.Linear(512, 10, rngs=rngs)

    def __call__(self, x):
        pool = lambda x: nnx.max_pool(x, window_shape=(2, 2), strides=(2, 2))  # noqa: E731
        x = self.dropout1(nnx.relu(pool(self.conv2(nnx.relu(self.conv1(x))))))
        x = self.dropout2(nnx.relu(pool(self.conv4(nnx.relu(self.conv3(x))))))
        x = x.reshape(x.shape[0], -1)
        return self.linear2(self.dropout3(nnx.relu(self.linear1(x))))


@nnx.jit
def train_step(model, optimizer, images, labels):
    def loss_fn(model):
        logits = model(images)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


def main():
    args = arguments(["cnn"])
    rng = np.random.RandomState(args.seed)
    images = rng.uniform(0, 1, (args.examples, 32, 32, 3)).astype(np.float32)
    labels = rng.randint(0, 10, args.examples).astype(np.int32)
    model = CNN(rngs=nnx.Rngs(args.seed))
    optimizer = nnx.Optimizer(model, optax.sgd(0.01, momentum=0.9), wrt=nnx.Param)
    model.train()
    steps = args.examples // args.batch_size
    seconds = []
    for _ in range(args.epochs):
        order = rng.permutation(args.examples)
        start = time.perf_counter()
        for step in range(steps):
            index = order[step * args.batch_size : (step + 1) * args.batch_size]
            loss = train_step(model, optimizer, images[index], labels[index])
        jax.block_until_ready(loss)
        seconds.append(time.perf_counter() - start)
    print_result(
        "flax (its own loop)",
        args.task,
        epoch_seconds=seconds,
        examples_per_epoch=steps * args.batch_size,
        loss=float(loss),
    )


if __name__ == "__main__":
    main()
