"""Keras 3 (TensorFlow backend) for Rosetta Bench. Keras on TensorFlow shares TensorFlow's
runtime (threads, device, mixed-precision policy, sync), so that comes from bench_tensorflow;
what is Keras' own is the model API: Sequential / applications, compile, fit, predict."""
import keras
import numpy as np

from bench_tensorflow import configure, memory_stats, peak_flops, sync, versions, weights  # noqa: F401

# capabilities and options: conf/framework/keras.yaml (checked before setup() by the runtime)
_options = {}


def options():
    return _options


def setup(run):
    if keras.backend.backend() != "tensorflow":
        raise NotImplementedError("framework=keras runs Keras on TensorFlow; KERAS_BACKEND is "
                                  "%r" % keras.backend.backend())
    _options.clear()
    _options.update(run["framework"]["options"])
    settings = configure(run, _options["threads"], _options["interop_threads"])
    settings.update(jit_compile=bool(_options["jit_compile"]), backend=keras.backend.backend())
    return settings


def count_parameters(model):
    """SPEC's convention: no batch-norm moving statistics, no conv biases where SPEC's model
    has none (keras.applications.ResNet50 has them; they hold zeros, see resnet50.py)."""
    return int(sum(int(np.prod(v.shape)) for v in model.weights
                   if "moving_" not in v.path and v.path not in model.spec_excluded))


def tensors(model):
    """Every weight of the Keras model, keyed by variable path, with batch norm's moving
    statistics; not the ResNet50 application's zero conv biases, which SPEC's model lacks."""
    return weights.variable_tensors(model.weights, model.spec_excluded)
