"""Keras 2.3.1 for Rosetta Bench, the last multi-backend Keras, on whichever backend
KERAS_BACKEND names: CNTK 2.7 (framework=keras_cntk) or Theano 1.0.5 (keras_theano), the 2018
benchmark's Keras rows. The models, the weight layouts and the training API (compile, fit,
predict) are Keras' own and the same on both backends; what is the backend's (its set-up before
Keras is imported, device, threads, versions, matmul peak) lives in one small module per
backend, backend_<name>.py, picked by KERAS_BACKEND.

Keras 2 fixes its backend when it is first imported, from KERAS_BACKEND (conf/framework/
keras_*.yaml's env for workers): the backend module is imported first, so that its set-up
(Theano's shims and flags, CNTK's MPI check) runs before `import keras`."""

import importlib
import os
import sys

import numpy as np

# capabilities and options: conf/framework/keras_*.yaml (checked before setup() by the runtime)
BACKENDS = {"keras_cntk": "cntk", "keras_theano": "theano"}

_name = os.environ.get("KERAS_BACKEND")
if _name not in BACKENDS.values():
    raise ImportError(
        "bench_keras2 runs Keras 2.3.1 on CNTK or Theano, picked by KERAS_BACKEND before keras "
        "is imported, and KERAS_BACKEND is %r: set KERAS_BACKEND=cntk (framework=keras_cntk, "
        "`nox -s cntk`) or KERAS_BACKEND=theano (keras_theano, `nox -s theano`); the workers' "
        "conf/framework/keras_*.yaml env does so" % (_name,)
    )
# Keras 2 reads, and writes when missing, keras.json in KERAS_HOME (default ~/.keras): this
# environment's own, so that a user's ~/.keras is neither read nor written
os.environ.setdefault("KERAS_HOME", os.path.join(sys.prefix, "etc", "keras2"))
_backend = importlib.import_module("bench_keras2.backend_" + _name)  # before keras

import keras  # noqa: E402
from keras import backend as K  # noqa: E402

from . import weights  # noqa: E402

_options = {}
# Keras 2's graph functions' build seconds in this process, by "<model>.<train|predict>" (on
# Theano: its compile to C): filled by loop.build_functions in build_model, recorded with
# the settings (setup() returns this dict), apart from every timed region but "build"
compile_seconds = {}


def options():
    return _options


def backend():
    """This process's backend module (Keras fixed its backend when it was imported)."""
    return _backend


def setup(run):
    name = run["framework"]["name"]
    wanted = BACKENDS[name]
    if K.backend() != wanted:
        raise NotImplementedError(
            "framework=%s runs Keras on %s, but this process's Keras uses %s: set "
            "KERAS_BACKEND=%s before keras is imported (conf/framework/%s.yaml's env does so "
            "for workers)" % (name, wanted, K.backend(), wanted, name)
        )
    _options.clear()
    _options.update(run["framework"]["options"])
    settings = _backend.configure(run, _options)
    # NCHW, both backends' native layout (Keras 2 transposes channels_last around each
    # convolution on CNTK and Theano): the runtime's arrays as they are, no native_layout
    K.set_image_data_format("channels_first")
    K.set_floatx("float32")
    np.random.seed(run["seed"])  # Keras 2 draws its initialisers' and dropout's seeds from it
    compile_seconds.clear()
    settings.update(
        backend=K.backend(),
        image_data_format=K.image_data_format(),
        keras_home=os.environ["KERAS_HOME"],
        compile_seconds=compile_seconds,
    )
    settings.update({k: v for k, v in _options.items() if k not in settings})
    return settings


def versions():
    return dict(_backend.versions(), keras=keras.__version__)


def sync():
    """Keras 2's fit and predict return host values (a loss, numpy outputs): work is done."""


def count_parameters(model):
    """SPEC's convention: no batch-norm moving statistics, no conv biases where SPEC's model
    has none (keras.applications' ResNet50 has them; they hold zeros, see resnet50.py)."""
    return int(
        sum(
            int(np.prod(K.int_shape(v)))
            for v in model.trainable_weights
            if v.name not in model.spec_excluded
        )
    )


def tensors(model):
    """Every weight of the Keras model, keyed by variable name, with batch norm's moving
    statistics; not the ResNet50 application's zero conv biases, which SPEC's model lacks."""
    return weights.variable_tensors(model.weights, model.spec_excluded)


def memory_stats():
    return None  # CPU only: the worker records the peak resident set size


def peak_flops(precision, size=2048):
    return _backend.peak_flops(precision, size)
