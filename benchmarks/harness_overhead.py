"""Harness overhead: the PyTorch CNN training loop bare vs. through the harness, one process.

    .nox/torch/bin/python benchmarks/harness_overhead.py [--batches 200] [--rounds 3]

"bare" feeds the framework's train_epoch a plain generator of the same batches; "harness"
feeds it bench_shared's TrainBatches (per-batch host stamps, throttled progress events) inside
the Stopwatch (a sync at both ends). Rounds alternate bare/harness so that drift on a shared
machine hits both; the figure is the ratio of the medians. Target: under 1 %.
"""
import argparse
import contextlib
import io
import statistics
import time

import numpy as np

import bench_torch
from bench_shared import batching, progress
from bench_shared.timing import Stopwatch
from bench_torch import cnn


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    options = dict(threads=0, interop_threads=1, channels_last=True, compile=False,
                   cudnn_benchmark=True, tf32=False)
    run = {"framework": {"options": options}, "device": {"name": "cpu", "index": 0}, "seed": 0,
           "precision": "fp32", "task": {"name": "cnn", "optimizer": {"lr": 0.01, "momentum": 0.9}}}
    bench_torch.setup(run)
    model = cnn.build_model(run)
    rng = np.random.RandomState(0)
    n = args.batches * 64
    x = rng.rand(n, 3, 32, 32).astype(np.float32)
    y = rng.randint(0, 10, n)

    def bare(epoch):
        order = batching.epoch_permutation(n, 0, epoch)
        start = time.perf_counter()
        cnn.train_epoch(model, ((x[order[i:i + 64]], y[order[i:i + 64]])
                                for i in range(0, n, 64)))
        return time.perf_counter() - start

    def harness(epoch):
        stopwatch = Stopwatch(bench_torch.sync)
        batches = batching.TrainBatches(x, y, 64, 0, epoch, sync=bench_torch.sync,
                                        on_batch=progress.Throttle("train", args.batches))
        with contextlib.redirect_stdout(io.StringIO()), stopwatch.region("epoch"):
            cnn.train_epoch(model, batches)
        return stopwatch.last("epoch")

    bare(0)  # warm-up: allocator, oneDNN primitive caches
    times = {"bare": [], "harness": []}
    for r in range(args.rounds):
        for name, fn in (("bare", bare), ("harness", harness)) if r % 2 == 0 else \
                (("harness", harness), ("bare", bare)):
            times[name].append(fn(r + 1))
            print(f"round {r + 1} {name:8s} {times[name][-1]:.3f} s", flush=True)
    b, h = statistics.median(times["bare"]), statistics.median(times["harness"])
    print(f"bare {b:.3f} s, harness {h:.3f} s per {args.batches} batches: "
          f"overhead {100 * (h / b - 1):+.2f} % (target < 1 %)")


if __name__ == "__main__":
    main()
