"""Keras on TensorFlow: TensorFlow's runtime set-up, as framework=tensorflow does it
(bench_tensorflow: intra-/inter-op thread pools before the runtime starts, device, policy,
seeds; its versions, sync, GPU memory and tf.function matmul peak)."""
from bench_tensorflow import configure as _configure
from bench_tensorflow import memory_stats, peak_flops, sync, versions  # noqa: F401


def configure(run, options):
    return _configure(run, options["threads"], options["interop_threads"])
