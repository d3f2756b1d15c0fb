"""A numpy stand-in framework for the orchestrator's tests: real workers, no deep-learning
framework. Its models are tiny (softmax regression, bag of words, a random projection) but
they learn the synthetic data, and its `fault` option makes a worker crash, hang or die."""

import os
import signal
import sys
import time

import numpy as np

from bench_shared import distributed
from bench_shared.timing import matmul_flops, peak_rate

_options = {}


def setup(run):
    _options.update(run["framework"]["options"])
    fault = _options["fault"]
    if _options["fault_rank"] not in (-1, distributed.process(run)["rank"]):
        fault = "none"  # another rank's fault
    if fault == "crash":
        sys.stderr.write("fake: about to crash on purpose\n")
        raise RuntimeError("fake crash requested")
    if fault == "exit":
        sys.stderr.write("fake: exiting without a result\n")
        sys.stderr.flush()
        os._exit(7)
    if fault == "kill":
        sys.stderr.write("fake: killing myself\n")
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    if fault == "hang":
        sys.stderr.write("fake: hanging\n")
        sys.stderr.flush()
        time.sleep(3600)
    if fault == "unsupported":
        raise NotImplementedError("cnn is not supported by fake 0.0: asked to say so")
    return {
        "lr": _options["lr"],
        "delay_ms": _options["delay_ms"],
        "skip_training": _options["skip_training"],
        "ld_library_path": os.environ.get("LD_LIBRARY_PATH"),
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
        "cpus": sorted(os.sched_getaffinity(0)),
    }


def sync():
    pass


def versions():
    return {"fake": "0.0"}


def count_parameters(model):
    return int(sum(p.size for p in model.params))


def memory_stats():
    return None


def lr():
    return _options["lr"]


def delay_s():
    """Per batch: the configured delay_ms, plus FAKE_EXTRA_DELAY_MS from the environment (a
    machine made slower on purpose, outside the configuration, as fewer threads would be)."""
    return (_options["delay_ms"] + float(os.environ.get("FAKE_EXTRA_DELAY_MS", "0"))) / 1000.0


def eval_delay_s():
    """Per predict call: the configured eval_delay_ms (an evaluation made slow on purpose)."""
    return _options["eval_delay_ms"] / 1000.0


def skip_training():
    return _options["skip_training"]


def peak_flops(precision, size=256):
    """NumPy's float32 matrix product, measured: the denominator the harness divides by."""
    a = np.random.RandomState(0).rand(size, size).astype(np.float32)

    def work(n):
        for _ in range(n):
            a @ a

    return peak_rate(work, matmul_flops(size))
