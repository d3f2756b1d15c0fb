"""Theano + Lasagne for Rosetta Bench (framework=lasagne): Theano's set-up (bench_theano:
its shims and THEANO_FLAGS, shared with Keras 2 on Theano), threads and OpenMP, the seed of
Lasagne's initialisers and dropout, and the model's native tensors.

Theano 1.0.5 (2020) and Lasagne 0.1 (2015) are unmaintained: see README.md for the shims.
"""

import bench_theano

bench_theano.configure()  # before the first `import theano` (THEANO_FLAGS, the shims)

import numpy as np  # noqa: E402

from . import compat  # noqa: E402

compat.install_downsample()  # before the first `import lasagne`

import lasagne  # noqa: E402

from .weights import tensors  # noqa: E402,F401  the model's native tensors (weight protocol)

# capabilities and options: conf/framework/lasagne.yaml (checked before setup() by the runtime)

# theano.function's compile seconds of this process, by "<task>.<train|predict>": filled by
# loop.Model in build_model and recorded in result.json with the settings (setup() returns
# this dict), apart from every timed region but "build"
compile_seconds = {}


def setup(run):
    """Threads, OpenMP and the seed; return what was applied (with THEANO_FLAGS by origin)."""
    options = run["framework"]["options"]
    settings = bench_theano.cpu_setup(options)
    # Lasagne draws initial weights and dropout streams' seeds from this generator
    lasagne.random.set_rng(np.random.RandomState(run["seed"]))
    compile_seconds.clear()
    settings["compile_seconds"] = compile_seconds
    settings.update({k: v for k, v in options.items() if k not in settings})
    return settings


def versions():
    info = bench_theano.versions()
    info["lasagne"] = lasagne.__version__
    return info


def sync():
    """Theano's CPU functions return when their work is done: nothing is queued."""


def count_parameters(model):
    """Trainable parameters (SPEC's convention: batch-norm running statistics are not)."""
    return sum(
        int(p.get_value(borrow=True).size)
        for p in lasagne.layers.get_all_params(model.net, trainable=True)
    )


def memory_stats():
    return None  # the CPU only: the worker records the process's peak RSS


def peak_flops(precision, size=2048):
    return bench_theano.peak_flops(size)
