"""Keras on TensorFlow: TensorFlow's runtime set-up, as framework=tensorflow does it
(bench_tensorflow: intra-/inter-op thread pools before the runtime starts, device, policy,
seeds, and for devices=N the tf.distribute strategy; its versions, sync, GPU memory and
tf.function matmul peak). devices=N is conf/framework/keras.yaml's one_process launch:
tf.distribute.MirroredStrategy over N logical CPU devices (or N GPUs) in this one worker, set
as TensorFlow's default strategy before the model is built, so that Keras' fit and predict
split each global batch over the N replicas and all-reduce the gradients."""

import tensorflow as tf

from bench_tensorflow import configure as _configure
from bench_tensorflow import memory_stats, peak_flops, sync, versions  # noqa: F401


def configure(run, options):
    return _configure(run, options["threads"], options["interop_threads"])


def strategy():
    """The run's strategy of N replicas (devices=N), or None for one device."""
    return tf.distribute.get_strategy() if tf.distribute.has_strategy() else None
