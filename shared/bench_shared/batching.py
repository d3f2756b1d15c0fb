"""The batching rules (SPEC.md "What is timed"), written once for every framework.

Training: each epoch a permutation seeded by (seed, epoch), complete batches only.
Evaluation: every example in order, the last batch possibly short.
"""

import time

import numpy as np


def epoch_permutation(num_examples, seed, epoch):
    """The example order of one epoch; the same in every framework and every interpreter."""
    return np.random.RandomState([seed, epoch]).permutation(num_examples)


def num_complete_batches(num_examples, batch_size):
    return num_examples // batch_size


class TrainBatches(object):
    """Iterates (x, y) numpy batches of one epoch and stamps the host clock at every hand-over.

    The framework's training loop consumes it like any iterable, or, where its input pipeline
    gathers the batches itself (index_matrix), stamps the clock with stamp(i) and close().
    `stamps[i]` is the time the loop asked for batch i (host clock, no device sync:
    asynchronous engines may still be working). With `sync_after_first` the device is
    synchronised once after the first step, so `first_step_seconds` is a true device time (it
    absorbs compilation and autotuning).

    Data-parallel (`shard=(rank, world_size)`): the epoch's permutation is cut into global
    batches of world_size x batch_size, and each rank takes its slice of each, so N devices see
    the same examples per step as one device with an N times larger batch. `transform` (e.g.
    the densenet task's crop, flip and normalisation) turns each x batch into the model's
    input inside the loop.
    """

    def __init__(
        self, x, y, batch_size, seed, epoch, sync=None, on_batch=None, shard=(0, 1), transform=None
    ):
        self.x, self.y, self.batch_size = x, y, batch_size
        self.rank, self.world_size = shard
        self.order = epoch_permutation(len(x), seed, epoch)
        self.num_batches = num_complete_batches(len(x), batch_size * self.world_size)
        self.sync = sync
        self.on_batch = on_batch
        self.transform = transform
        self.stamps = []
        self.first_step_end = None

    def __len__(self):
        return self.num_batches

    def indices(self, i):
        """This rank's example indices of batch i."""
        start = (i * self.world_size + self.rank) * self.batch_size
        return self.order[start : start + self.batch_size]

    def index_matrix(self):
        """The epoch's batches as rows of example indices (num_batches x batch_size), for an
        input pipeline that gathers each batch itself and stamps the clock (stamp, close)."""
        return np.stack([self.indices(i) for i in range(self.num_batches)])

    def stamp(self, i):
        """The loop asks for batch i: the clock (and the single sync after the first step)."""
        if i == 1 and self.sync is not None:
            self.sync()
            self.first_step_end = time.perf_counter()
        self.stamps.append(time.perf_counter())
        if self.on_batch is not None:
            self.on_batch(i)

    def close(self):
        """The epoch's last step is done: the last stamp."""
        self.stamps.append(time.perf_counter())

    def __iter__(self):
        for i in range(self.num_batches):
            self.stamp(i)
            idx = self.indices(i)
            x = self.x[idx]
            yield (self.transform(x) if self.transform else x), self.y[idx]
        self.close()


def eval_batches(x, batch_size, transform=None):
    """Every example in order, as writable in-memory arrays; the last batch may be short."""
    for start in range(0, len(x), batch_size):
        batch = np.array(x[start : start + batch_size])
        yield transform(batch) if transform else batch


def fixed_batches(x, batch_size, num_batches):
    """The inference protocol: the same `num_batches` complete batches for warm-up and timing,
    read into memory before timing starts."""
    need = batch_size * num_batches
    if len(x) < need:
        raise ValueError(
            "inference needs %d examples (%d batches of %d), the data has %d"
            % (need, num_batches, batch_size, len(x))
        )
    return [np.array(x[i * batch_size : (i + 1) * batch_size]) for i in range(num_batches)]
