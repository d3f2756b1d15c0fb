"""TensorFlow 2 for Rosetta Bench: device, threads, mixed precision, the tf.distribute
strategy (devices=N) and sync."""

import os

import keras
import numpy as np
import tensorflow as tf

from bench_keras_layers import POLICIES  # Keras' mixed-precision policies
from bench_shared import distributed
from bench_shared.timing import peak_matmul_rate

from . import distribute
from .weights import tensors  # noqa: F401  the model's native tensors (weight protocol)

# capabilities and options: conf/framework/tensorflow.yaml (checked before setup() by the runtime)

_device = "/CPU:0"
_strategy = None  # tf.distribute: the default strategy, or the run's N devices'
_task = 0  # this process's rank: its own devices in a multi-worker cluster
_options = {}


def device():
    return _device


def strategy():
    return _strategy or tf.distribute.get_strategy()


def options():
    return _options


def setup(run):
    _options.clear()
    _options.update(run["framework"]["options"])
    settings = configure(run, _options["threads"], _options["interop_threads"])
    settings.update(xla=bool(_options["xla"]), native_pipeline=bool(_options["native_pipeline"]))
    return settings


def versions():
    build = tf.sysconfig.get_build_info()
    return {
        "tensorflow": tf.__version__,
        "keras": keras.__version__,
        "cuda": build.get("cuda_version"),
        "cudnn": build.get("cudnn_version"),
        "onednn": os.environ.get("TF_ENABLE_ONEDNN_OPTS", "default (on)"),
    }


def sync():
    """Wait for every queued op on this process's devices (eager GPU ops are asynchronous), as
    tf.test.experimental.sync_devices does; but not on the other ranks' devices, which
    MultiWorkerMirroredStrategy lists too (and cannot sync from here)."""
    for dev in tf.config.list_logical_devices():
        if tf.DeviceSpec.from_string(dev.name).task in (None, _task):
            with tf.device(dev.name):
                tf.raw_ops.SyncDevice()  # (ops are queued only on GPUs: execution is synchronous)


def count_parameters(model):
    """Weights in SPEC's convention: batch norm's moving statistics are buffers, not counted
    (and a frozen feature extractor still has its parameters)."""
    return int(sum(int(np.prod(v.shape)) for v in model.net.weights if "moving_" not in v.path))


def memory_stats():
    if not _device.startswith("/GPU"):
        return None
    info = tf.config.experimental.get_memory_info(_device.lstrip("/"))
    return {"peak_allocated_bytes": info["peak"]}


def peak_flops(precision):
    """Measured dense matrix-multiply FLOP/s on the device: the utilisation denominator."""
    dtype = {"fp32": tf.float32, "bf16": tf.bfloat16, "fp16": tf.float16}[precision]

    def make_work(size):
        with tf.device(_device):
            a = tf.cast(tf.random.normal((size, size), dtype=tf.float32), dtype)
        matmul = tf.function(lambda: tf.matmul(a, a))

        def work(n):  # the first call traces
            with tf.device(_device):
                for _ in range(n):
                    out = matmul()
                out.numpy()

        return work

    return peak_matmul_rate(make_work)


def configure(run, threads, interop_threads):
    """Device, thread pools, data-parallel strategy, mixed-precision policy and seeds; shared
    with bench_keras."""
    global _device, _strategy, _task
    if run["device"]["name"] == "gpu":
        gpus = tf.config.list_physical_devices("GPU")
        if not gpus:
            raise NotImplementedError(
                "device=gpu is not supported by tensorflow %s here: it "
                "sees no GPU (a CPU-only build?)" % tf.__version__
            )
        _device = "/GPU:%d" % run["device"]["index"]
        if distributed.launch(run) == "processes":  # one GPU per rank, after device.index
            index = run["device"]["index"] + distributed.process(run)["local_rank"]
            tf.config.set_visible_devices(gpus[index], "GPU")
            _device = "/GPU:0"
    else:
        _device = "/CPU:0"
    try:  # settable once, before TensorFlow initialises its runtime
        tf.config.threading.set_intra_op_parallelism_threads(
            threads or len(os.sched_getaffinity(0))
        )
        tf.config.threading.set_inter_op_parallelism_threads(interop_threads)
    except RuntimeError:
        pass
    _strategy, joined = distribute.make_strategy(run)
    _task = distributed.process(run)["rank"]
    keras.mixed_precision.set_global_policy(POLICIES[run["precision"]])
    keras.utils.set_random_seed(run["seed"])
    return {
        "device": _device,
        "threads": tf.config.threading.get_intra_op_parallelism_threads(),
        "interop_threads": tf.config.threading.get_inter_op_parallelism_threads(),
        "policy": keras.mixed_precision.global_policy().name,
        "layout": "NHWC (transposed once at load time)",
        "distribute": joined,
    }
