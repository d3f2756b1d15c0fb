"""Keras 3 for Rosetta Bench, on whichever backend KERAS_BACKEND names: TensorFlow
(framework=keras), JAX (keras_jax) or PyTorch (keras_torch). The models, the weight layouts
and the training API (compile, fit, predict) are Keras' own and the same on every backend;
what is the backend's (device, threads, versions, sync, memory, matmul peak) lives in one
small module per backend, backend_<name>.py, picked by keras.backend.backend()."""

import contextlib
import importlib

import keras
import numpy as np

from bench_keras_layers import DTYPES, POLICIES
from bench_shared.timing import peak_matmul_rate

from . import weights

# capabilities and options: conf/framework/keras*.yaml (checked before setup() by the runtime)
BACKENDS = {"keras": "tensorflow", "keras_jax": "jax", "keras_torch": "torch"}
# the rows written in R (packages/r/keras) that drive this package's functions, and the Python
# row whose backend and environment they use
R_ROWS = {"r_keras": "keras"}

_options = {}
_device = contextlib.ExitStack()  # the worker's keras.device scope (JAX, PyTorch)


def options():
    return _options


def backend():
    """This process's backend module (Keras fixes its backend when it is first imported)."""
    return importlib.import_module("bench_keras.backend_" + keras.backend.backend())


def setup(run):
    name = run["framework"]["name"]
    wanted = BACKENDS[R_ROWS.get(name, name)]
    if keras.backend.backend() != wanted:
        raise NotImplementedError(
            "framework=%s runs Keras on %s, but this process's Keras uses %s: set "
            "KERAS_BACKEND=%s before keras is imported (conf/framework/%s.yaml's env does so "
            "for workers)" % (name, wanted, keras.backend.backend(), wanted, name)
        )
    _options.clear()
    _options.update(run["framework"]["options"])
    settings = backend().configure(run, _options)
    if "keras_device" in settings:  # Keras places new tensors there for the worker's life
        _device.close()
        _device.enter_context(keras.device(settings["keras_device"]))
    keras.mixed_precision.set_global_policy(POLICIES[run["precision"]])
    keras.utils.set_random_seed(run["seed"])
    settings.update(
        backend=keras.backend.backend(),
        jit_compile=bool(_options["jit_compile"]),
        policy=keras.mixed_precision.global_policy().name,
        layout="NHWC (transposed once at load time)",
    )
    return settings


def versions():
    return dict(backend().versions(), keras=keras.__version__)


def sync():
    backend().sync()


def count_parameters(model):
    """SPEC's convention: no batch-norm moving statistics, no conv biases where SPEC's model
    has none (keras.applications.ResNet50 has them; they hold zeros, see resnet50.py)."""
    return int(
        sum(
            int(np.prod(v.shape))
            for v in model.weights
            if "moving_" not in v.path and v.path not in model.spec_excluded
        )
    )


def tensors(model):
    """Every weight of the Keras model, keyed by variable path, with batch norm's moving
    statistics; not the ResNet50 application's zero conv biases, which SPEC's model lacks."""
    return weights.variable_tensors(model.weights, model.spec_excluded)


def memory_stats():
    return backend().memory_stats()


def peak_flops(precision):
    """Measured dense matrix-multiply FLOP/s on the device: the utilisation denominator (the
    backend's own where it has one, else keras.ops.matmul, dispatched op by op)."""
    own = getattr(backend(), "peak_flops", None)
    if own:
        return own(precision)

    def make_work(size):
        a = keras.ops.cast(keras.random.normal((size, size), seed=0), DTYPES[precision])

        def work(n):
            outs = [keras.ops.matmul(a, a) for _ in range(n)]
            for out in outs:  # every product done (dispatch may be asynchronous)
                keras.ops.convert_to_numpy(out[:1, :1])

        return work

    return peak_matmul_rate(make_work)
