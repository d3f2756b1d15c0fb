"""JAX + Flax NNX + optax for Rosetta Bench: platform, XLA's threads and flags, precision, sync."""

import os

import jax
import jax.numpy as jnp

from bench_shared import distributed
from bench_shared.timing import peak_matmul_rate

from .weights import tensors  # noqa: F401  the model's native tensors (weight protocol)

# capabilities and options: conf/framework/flax.yaml (checked before setup() by the runtime)
# Flax modules compute in `dtype` and keep float32 parameters (param_dtype): bf16 compute
COMPUTE_DTYPES = {"fp32": jnp.float32, "bf16": jnp.bfloat16}
# jax_platforms (the backends that start: the CPU's alone on a CPU run) and the run's backend
PLATFORMS = {"cpu": ("cpu", "cpu"), "gpu": ("cuda,cpu", "cuda")}

_options = {}
_run = {}
_device = []  # the run's jax.Device
_devices = []  # every device of a data-parallel run (devices=N): the first is _device's
_pending = []  # the last array a task module dispatched: sync() waits for it


def options():
    return _options


def compute_dtype():
    return COMPUTE_DTYPES[_run["precision"]]


def seed():
    return _run["seed"]


def dispatched(array):
    """Remember the newest result of asynchronous work, for sync()."""
    _pending[:] = [array]
    return array


def setup(run):
    """Choose the platform, set XLA's threads and flags and the dtype; return what was applied."""
    _options.clear()
    _options.update(run["framework"]["options"])
    _run.clear()
    _run.update(precision=run["precision"], seed=run["seed"])
    # devices=N (task densenet): this one process drives N devices (conf/framework/flax.yaml)
    proc = distributed.joining(
        run,
        "one_process",
        "bench_flax drives a run's devices from one process (a Mesh)",
        "conf/framework/flax.yaml",
    )
    count = proc["world_size"] if proc else 1
    device = run["device"]["name"]
    threads = configure_xla(
        _options["threads"], _options["xla_flags"], count if device == "cpu" else 1
    )
    platforms, backend = PLATFORMS[device]
    jax.config.update("jax_platforms", platforms)
    try:
        devices = jax.devices(backend)
    except RuntimeError as exc:
        raise NotImplementedError(
            "device=%s is not supported by jax %s here: %s (the CPU wheel has no CUDA; install "
            "jax[cuda12] with BENCH_JAX_REQUIREMENT, see packages/flax/README.md)"
            % (device, jax.__version__, str(exc).splitlines()[0])
        ) from None
    index = run["device"]["index"]
    if index + count > len(devices):
        raise NotImplementedError(
            "device.index=%d, devices=%d: jax sees %d %s device(s)%s"
            % (
                index,
                count,
                len(devices),
                device,
                " (XLA's backend started before setup() could set its host-platform device "
                "count: run it in a fresh process)"
                if device == "cpu"
                else "",
            )
        )
    _device[:] = [devices[index]]
    _devices[:] = devices[index : index + count]
    jax.config.update("jax_default_device", devices[index])
    if device == "gpu":  # JAX's default fp32 GPU matmuls are TF32: off, so fp32 means fp32
        jax.config.update(
            "jax_default_matmul_precision", "tensorfloat32" if _options["tf32"] else "highest"
        )
    settings = {
        "device": str(devices[index]),
        "devices": [str(d) for d in _devices],
        "device_name": getattr(devices[index], "device_kind", None),
        "threads": threads,
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "compute_dtype": jnp.dtype(compute_dtype()).name,
        "param_dtype": "float32",
        "layout": "NHWC (transposed once at load time)",
    }
    settings.update({k: v for k, v in _options.items() if k not in settings})
    return settings


def versions():
    import flax
    import jaxlib
    import optax

    return {
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "flax": flax.__version__,
        "optax": optax.__version__,
    }


def sync():
    """JAX dispatches asynchronously and has no device-wide barrier: wait for the newest
    result a task module dispatched (its computation wrote every output of its step)."""
    if _pending:
        jax.block_until_ready(_pending[0])


def count_parameters(model):
    """nnx.Param elements: batch norm's running statistics are nnx.BatchStat, not counted."""
    from flax import nnx

    return int(sum(p.size for p in jax.tree.leaves(nnx.state(model.net, nnx.Param))))


def memory_stats():
    if not _device or _device[0].platform == "cpu":
        return None
    stats = _device[0].memory_stats() or {}
    return {"peak_allocated_bytes": stats.get("peak_bytes_in_use")}


def peak_flops(precision):
    """Measured dense matrix-multiply FLOP/s on the device: the utilisation denominator."""
    matmul = jax.jit(lambda a: a @ a)

    def make_work(size):
        a = jax.random.normal(jax.random.key(0), (size, size), jnp.float32).astype(
            COMPUTE_DTYPES[precision]
        )

        def work(n):  # the first call compiles
            for _ in range(n):
                out = matmul(a)
            out.block_until_ready()

        return work

    return peak_matmul_rate(make_work)


def devices():
    """The run's devices: one, or the N of a data-parallel run (the task module's Mesh)."""
    return list(_devices)


def configure_xla(threads, xla_flags, host_devices=1):
    """XLA reads its flags and sizes its CPU thread pools once, when the backend starts: set
    both before the first JAX computation. JAX has no thread-count API; XLA's CPU client takes
    its pool size from PJRT_NPROC (else NPROC, else the CPUs this process may run on).
    host_devices > 1: the CPU backend shows that many devices (XLA's host-platform device
    count), one process driving them all; they share that one thread pool (the same cores)."""
    if host_devices > 1:
        xla_flags = " ".join(
            filter(None, ["--xla_force_host_platform_device_count=%d" % host_devices, xla_flags])
        )
    if xla_flags:
        os.environ["XLA_FLAGS"] = " ".join(filter(None, [os.environ.get("XLA_FLAGS"), xla_flags]))
    if threads:
        os.environ["PJRT_NPROC"] = str(threads)
    nproc = os.environ.get("PJRT_NPROC") or os.environ.get("NPROC")
    return int(nproc) if nproc else len(os.sched_getaffinity(0))
