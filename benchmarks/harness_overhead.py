"""Harness overhead: the PyTorch CNN training loop bare vs. through the harness, one process.

    .nox/torch/bin/python benchmarks/harness_overhead.py [--batches 200] [--rounds 3]

"bare" feeds the framework's train_epoch a plain generator of the same batches; "harness"
feeds it bench_shared's TrainBatches (per-batch host stamps, throttled progress events) inside
the Stopwatch (a sync at both ends). Rounds alternate bare/harness so that drift on a shared
machine hits both; the figure is the median of the per-round ratios. On a shared 2-core
machine epoch times drift by +-10 %, more than the overhead, so the script also times the two
batch sources alone (no training, many epochs): their difference per batch, divided by the
measured step time, is the overhead the harness adds to a step. Target: under 1 %.
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
    options = dict(
        threads=0,
        interop_threads=1,
        channels_last=True,
        compile=False,
        cudnn_benchmark=True,
        tf32=False,
    )
    run = {
        "framework": {"options": options},
        "device": {"name": "cpu", "index": 0},
        "seed": 0,
        "precision": "fp32",
        "task": {"name": "cnn", "optimizer": {"lr": 0.01, "momentum": 0.9}},
    }
    bench_torch.setup(run)
    model = cnn.build_model(run)
    rng = np.random.RandomState(0)
    n = args.batches * 64
    x = rng.rand(n, 3, 32, 32).astype(np.float32)
    y = rng.randint(0, 10, n)

    def bare(epoch):
        order = batching.epoch_permutation(n, 0, epoch)
        start = time.perf_counter()
        cnn.train_epoch(
            model, ((x[order[i : i + 64]], y[order[i : i + 64]]) for i in range(0, n, 64))
        )
        return time.perf_counter() - start

    def harness(epoch):
        stopwatch = Stopwatch(bench_torch.sync)
        batches = batching.TrainBatches(
            x,
            y,
            64,
            0,
            epoch,
            sync=bench_torch.sync,
            on_batch=progress.Throttle("train", args.batches),
        )
        with contextlib.redirect_stdout(io.StringIO()), stopwatch.region("epoch"):
            cnn.train_epoch(model, batches)
        return stopwatch.last("epoch")

    bare(0)  # warm-up: allocator, oneDNN primitive caches
    ratios = []
    for r in range(args.rounds):
        pair = {}
        for name, fn in (
            (("bare", bare), ("harness", harness))
            if r % 2 == 0
            else (("harness", harness), ("bare", bare))
        ):
            pair[name] = fn(r + 1)
            print(f"round {r + 1} {name:8s} {pair[name]:.3f} s", flush=True)
        ratios.append(pair["harness"] / pair["bare"])
        step = pair["bare"] / args.batches
    print(
        f"whole epochs: harness/bare median {statistics.median(ratios):.4f} "
        f"(rounds: {', '.join(f'{q:.3f}' for q in ratios)})"
    )

    def source_seconds(make, epochs=20):
        start = time.perf_counter()
        for epoch in range(epochs):
            for _ in make(epoch):
                pass
        return (time.perf_counter() - start) / (epochs * args.batches)

    def plain(epoch):
        order = batching.epoch_permutation(n, 0, epoch)
        return ((x[order[i : i + 64]], y[order[i : i + 64]]) for i in range(0, n, 64))

    def instrumented(epoch):
        return batching.TrainBatches(
            x,
            y,
            64,
            0,
            epoch,
            sync=bench_torch.sync,
            on_batch=progress.Throttle("train", args.batches),
        )

    with contextlib.redirect_stdout(io.StringIO()):
        extra = source_seconds(instrumented) - source_seconds(plain)
    print(
        f"batch sources alone: the harness adds {extra * 1e6:.1f} us per batch = "
        f"{100 * extra / step:.3f} % of a {step * 1e3:.0f} ms training step (target < 1 %)"
    )


if __name__ == "__main__":
    main()
