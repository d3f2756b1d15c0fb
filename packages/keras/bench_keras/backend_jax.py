"""Keras on JAX: the platform (jax_platforms, set before JAX starts its backends), XLA's
flags as found (XLA_FLAGS: XLA's CPU runtime sizes its own thread pool from the cores it may
use; JAX has no thread-count API), data parallelism (devices=N: Keras 3's own distribution
API, which runs on JAX only), versions, sync, GPU memory."""

import os

import jax
import keras

from bench_shared import distributed

# XLA's CPU client splits the host into this many devices; read once, when the backend starts
HOST_DEVICES_FLAG = "--xla_force_host_platform_device_count"


def configure(run, options):
    gpu = run["device"]["name"] == "gpu"
    proc = distributed.joining(
        run, "one_process", "keras.distribution.DataParallel", "conf/framework/keras_jax.yaml"
    )
    if proc and not gpu:
        host_devices(proc["world_size"])  # before the backend starts, below
    jax.config.update("jax_platforms", "cuda" if gpu else "cpu")  # before the first jax op
    try:
        devices = jax.devices()
    except RuntimeError as exc:
        raise NotImplementedError(
            "device=gpu is not supported by jax %s here: %s (install "
            "jax[cuda12] for GPUs)" % (jax.__version__, exc)
        ) from exc
    index = run["device"]["index"] if gpu else 0
    settings = {
        "device": str(devices[index]),
        "keras_device": "%s:%d" % ("gpu" if gpu else "cpu", index),
        "threads": "XLA's own pool (every core this process may use)",
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
    }
    settings.update(data_parallel(proc, "gpu" if gpu else "cpu", index))
    return settings


def host_devices(count):
    """devices=N on a CPU: XLA's host platform as N devices (XLA_FLAGS, read when JAX starts
    its CPU backend, so before any jax op). One process, every core shared by the N."""
    flags = os.environ.get("XLA_FLAGS", "").split()
    wanted = "%s=%d" % (HOST_DEVICES_FLAG, count)
    given = [flag for flag in flags if flag.startswith(HOST_DEVICES_FLAG + "=")]
    if given and given != [wanted]:
        raise ValueError(
            "XLA_FLAGS has %s, but devices=%d needs %s: leave the flag to "
            "bench_keras" % (" ".join(given), count, wanted)
        )
    if not given:
        os.environ["XLA_FLAGS"] = " ".join(flags + [wanted])


def data_parallel(proc, kind, first):
    """Keras 3's data parallelism, set before the model is built: DataParallel replicates the
    variables over a one-axis mesh of the devices, and fit/predict shard each global batch
    over it; the jitted step is partitioned by XLA (its gradient all-reduce, and batch norm's
    statistics over the whole global batch). devices=1: no distribution (a plain jit)."""
    if proc is None:
        keras.distribution.set_distribution(None)  # a later run in this process: one device
        return {}
    count = proc["world_size"]
    devices = keras.distribution.list_devices(kind)[first : first + count]
    if len(devices) < count:
        raise ValueError(
            "devices=%d from %s:%d needs %d devices; JAX sees %s (on a CPU, XLA's backend "
            "started before %s was set: run it in a fresh process)"
            % (
                count,
                kind,
                first,
                first + count,
                keras.distribution.list_devices(kind),
                HOST_DEVICES_FLAG,
            )
        )
    keras.distribution.set_distribution(keras.distribution.DataParallel(devices=devices))
    return {"data_parallel": "keras.distribution.DataParallel", "mesh_devices": devices}


def versions():
    import jaxlib

    return {
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
    }


def sync():
    """Keras' fit and predict hand back host values (a loss, numpy outputs), which waits for
    the device; this also waits for JAX's pending side effects."""
    jax.effects_barrier()


def memory_stats():
    device = jax.devices()[0]
    if device.platform != "gpu":
        return None
    return {"peak_allocated_bytes": device.memory_stats().get("peak_bytes_in_use")}
