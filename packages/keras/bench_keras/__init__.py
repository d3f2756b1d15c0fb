"""Keras 3 (TensorFlow backend) for Rosetta Bench. Keras on TensorFlow shares TensorFlow's
runtime (threads, device, mixed-precision policy, sync), so that comes from bench_tensorflow;
what is Keras' own is the model API: Sequential / applications, compile, fit, predict."""
import keras
import numpy as np

from bench_tensorflow import configure, memory_stats, peak_flops, sync, versions  # noqa: F401

# The same values as conf/framework/keras.yaml (tests/test_declared.py checks)
CAPABILITIES = {
    "tasks": ["cnn", "resnet50", "rnn"],
    "precisions": {"cpu": ["fp32", "bf16"], "gpu": ["fp32", "fp16", "bf16"]},
}
OPTIONS = ("threads", "interop_threads", "jit_compile")
_options = {}


def options():
    return _options


def setup(run):
    if keras.backend.backend() != "tensorflow":
        raise NotImplementedError("framework=keras runs Keras on TensorFlow; KERAS_BACKEND is "
                                  "%r" % keras.backend.backend())
    _options.clear()
    _options.update(run["framework"]["options"])
    unknown = sorted(set(_options) - set(OPTIONS))
    if unknown:
        raise ValueError("unknown keras options %s; known: %s" % (unknown, ", ".join(OPTIONS)))
    settings = configure(run, _options["threads"], _options["interop_threads"])
    settings.update(jit_compile=bool(_options["jit_compile"]), backend=keras.backend.backend())
    return settings


def count_parameters(model):
    """SPEC's convention: no batch-norm moving statistics, no conv biases where SPEC's model
    has none (keras.applications.ResNet50 has them; they hold zeros, see resnet50.py)."""
    return int(sum(int(np.prod(v.shape)) for v in model.weights
                   if "moving_" not in v.path and v.path not in model.spec_excluded))
