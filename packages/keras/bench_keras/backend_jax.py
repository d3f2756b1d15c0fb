"""Keras on JAX: the platform (jax_platforms, set before JAX starts its backends), XLA's
flags as found (XLA_FLAGS: XLA's CPU runtime sizes its own thread pool from the cores it may
use; JAX has no thread-count API), versions, sync, GPU memory."""
import os

import jax


def configure(run, options):
    gpu = run["device"]["name"] == "gpu"
    jax.config.update("jax_platforms", "cuda" if gpu else "cpu")  # before the first jax op
    try:
        devices = jax.devices()
    except RuntimeError as exc:
        raise NotImplementedError("device=gpu is not supported by jax %s here: %s (install "
                                  "jax[cuda12] for GPUs)" % (jax.__version__, exc)) from exc
    index = run["device"]["index"] if gpu else 0
    return {"device": str(devices[index]), "keras_device": "%s:%d" % ("gpu" if gpu else "cpu",
                                                                      index),
            "threads": "XLA's own pool (every core this process may use)",
            "xla_flags": os.environ.get("XLA_FLAGS", "")}


def versions():
    import jaxlib

    return {"jax": jax.__version__, "jaxlib": jaxlib.__version__,
            "xla_flags": os.environ.get("XLA_FLAGS", "")}


def sync():
    """Keras' fit and predict hand back host values (a loss, numpy outputs), which waits for
    the device; this also waits for JAX's pending side effects."""
    jax.effects_barrier()


def memory_stats():
    device = jax.devices()[0]
    if device.platform != "gpu":
        return None
    return {"peak_allocated_bytes": device.memory_stats().get("peak_bytes_in_use")}
