"""What the loops beside it share, as the 2018 notebooks shared their common/utils.py: the
command line benchmarks/own_loops.py gives every loop, the shuffled minibatches (the 2018
yield_mb), a fit callback's epoch timing and the one JSON line each loop prints. NumPy and the
standard library only, Python 3.6 (Keras 2 on CNTK runs it)."""

import argparse
import json
import time


def arguments(tasks):
    """--task (one of tasks, the first by default), --examples, --epochs, --batch-size, --seed."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", default=tasks[0], choices=tasks)
    parser.add_argument("--examples", type=int, default=2048)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def minibatches(x, y, batch_size, rng):
    """One epoch's whole minibatches in a fresh shuffled order."""
    order = rng.permutation(len(x))
    for start in range(0, len(x) - batch_size + 1, batch_size):
        idx = order[start : start + batch_size]
        yield x[idx], y[idx]


class EpochTimes(object):
    """Mixed into a framework's fit callback (Keras, Paddle): the seconds of each epoch in
    `seconds`, timed inside the one fit call; fit has its loss on the host by each epoch's end."""

    def on_train_begin(self, logs=None):
        self.seconds = []

    def on_epoch_begin(self, epoch, logs=None):
        self.start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        self.seconds.append(time.perf_counter() - self.start)


def print_result(framework, task, **figures):
    """The one JSON line benchmarks/own_loops.py reads: epoch_seconds and examples_per_epoch
    for training, the inference figures for ResNet-50."""
    print(json.dumps(dict(figures, framework=framework, task=task)))
