"""The MXNet runtime both API styles share: threads, engine, context, mixed precision, sync.

MXNet reads its thread and engine variables once, when libmxnet loads (at `import mxnet`),
so configure() sets them in the environment *before* it imports mxnet, and nothing in
bench_mxnet imports mxnet earlier: the task modules, which do, are imported after setup().
"""

import ctypes
import os
import sys

from bench_shared import distributed

try:
    from importlib import metadata
except ImportError:  # Python < 3.8
    metadata = None

# What each option sets before libmxnet loads. OMP_NUM_THREADS: MXNet's own default is half the
# logical cores (it assumes hyper-threading), i.e. 1 thread on a 2-core machine; oneDNN
# (MKLDNN) kernels use these OpenMP threads. MXNET_CPU_WORKER_NTHREADS: the engine's CPU
# worker threads, each of which may run an operator at the same time as the others.
# OMP_WAIT_POLICY: ACTIVE threads spin at the end of a parallel region, PASSIVE ones sleep
# (faster on a quiet machine, and up to 4x slower on a loaded one, respectively); "" leaves it
# to the OpenMP runtime.
ENGINE_OPTIONS = {
    "threads": "OMP_NUM_THREADS",
    "worker_threads": "MXNET_CPU_WORKER_NTHREADS",
    "engine": "MXNET_ENGINE_TYPE",
    "omp_wait_policy": "OMP_WAIT_POLICY",
}
# recorded because they change speed; MXNet's defaults unless the user set them
RECORDED = (
    "MXNET_MKLDNN_ENABLED",
    "MXNET_SUBGRAPH_BACKEND",
    "MXNET_EXEC_BULK_EXEC_TRAIN",
    "MXNET_EXEC_BULK_EXEC_INFERENCE",
    "MXNET_CPU_PRIORITY_NTHREADS",
    "KMP_AFFINITY",
)
# int8 runs no AMP: its network is quantized after calibration (bench_mxnet.gluon.loop)
AMP_DTYPES = {"fp32": None, "fp16": "float16", "bf16": "bfloat16", "int8": None}

_state = {"context": None, "contexts": None, "precision": "fp32", "environment": None}


def engine_environment(options):
    """The variables MXNet reads at import, from the options (threads 0 = every usable core)."""
    values = dict(options, threads=options["threads"] or len(os.sched_getaffinity(0)))
    return {var: str(values[key]) for key, var in ENGINE_OPTIONS.items() if values[key] != ""}


# oneDNN's instruction-set caps below AVX-512 (ONEDNN_MAX_CPU_ISA, DNNL_MAX_CPU_ISA): the
# kernels a better CPU would take are switched off, bf16's among them (a test forces a CPU
# down to the path a lesser CPU takes: docs/testing.md)
BELOW_AVX512 = ("SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX2_VNNI_2")


def isa_cap():
    """The instruction set oneDNN is capped at by its variables (upper case), or None."""
    for variable in ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"):
        if os.environ.get(variable):
            return os.environ[variable].strip().upper()
    return None


def cpu_flags():
    """The CPU's feature flags, from /proc/cpuinfo (none where it cannot be read)."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def configure(run, options, amp_init=True):
    """Set the engine environment, import mxnet, choose the context and precision.
    amp_init: mixed precision by contrib.amp.init(), which rewrites the operator namespaces
    (Gluon); the Module API converts its finished symbols instead (amp.convert_symbol)."""
    wanted = engine_environment(options)
    if "mxnet" not in sys.modules:
        os.environ.update(wanted)
        _state["environment"] = wanted
    elif _state["environment"] != wanted:  # e.g. a second setup() in one test process
        raise ValueError(
            "mxnet was imported with %s, and MXNet reads these variables only once, at import; "
            "run %s in a fresh process" % (_state["environment"] or "its own defaults", wanted)
        )
    import mxnet as mx

    proc = distributed.joining(
        run,
        "one_process",
        "bench_mxnet drives a run's devices from one process (contexts)",
        "conf/framework/gluon.yaml, mxnet.yaml",
    )
    devices = proc["world_size"] if proc else 1
    if run["device"]["name"] == "gpu":
        if mx.context.num_gpus() == 0:
            raise NotImplementedError(
                "device=gpu is not supported by this mxnet %s build: it sees no CUDA device "
                "(install mxnet-cu<version>, e.g. BENCH_MXNET_REQUIREMENT=mxnet-cu112==1.9.1)"
                % mx.__version__
            )
        first = run["device"]["index"]
        if first + devices > mx.context.num_gpus():
            raise ValueError(
                "devices=%d from GPU %d needs %d GPUs; MXNet sees %d"
                % (devices, first, first + devices, mx.context.num_gpus())
            )
        _state["contexts"] = [mx.gpu(first + i) for i in range(devices)]
    else:
        # devices=N on a CPU: N contexts of one process. MXNet's cpu(0)..cpu(N-1) share the
        # engine's CPU worker threads and one OpenMP pool: the data-parallel code path runs,
        # but cannot be faster than one context
        _state["contexts"] = [mx.cpu(i) for i in range(devices)]
        if run["precision"] == "bf16" and "avx512f" not in cpu_flags():
            raise NotImplementedError(
                "precision=bf16 is not supported by mxnet %s on this CPU: its oneDNN's bf16 "
                "kernels need AVX-512 (avx512f), which this CPU lacks; use precision=fp32"
                % mx.__version__
            )
        capped = isa_cap()
        if run["precision"] == "bf16" and capped in BELOW_AVX512:
            raise NotImplementedError(
                "precision=bf16 is not supported by mxnet %s with oneDNN capped at %s: its "
                "bf16 kernels need AVX-512 (unset ONEDNN_MAX_CPU_ISA / DNNL_MAX_CPU_ISA, or "
                "use precision=fp32)" % (mx.__version__, capped)
            )
    _state["context"] = _state["contexts"][0]
    _state["precision"] = run["precision"]
    if AMP_DTYPES[run["precision"]] and amp_init:
        from mxnet.contrib import amp

        # AMP rewrites the operator namespaces: it must run before any model is built
        amp.init(target_dtype=AMP_DTYPES[run["precision"]])
    mx.random.seed(run["seed"])
    features = mx.runtime.Features()
    settings = dict(options)  # as requested, then what was applied
    settings.update(
        device=str(_state["context"]),
        contexts=[str(c) for c in _state["contexts"]],
        precision=run["precision"],
        amp=AMP_DTYPES[run["precision"]],
        threads=int(wanted["OMP_NUM_THREADS"]),
        openmp_threads=openmp_threads(),
        onednn=features.is_enabled("MKLDNN"),
        features=sorted(name for name, f in features.items() if f.enabled),
    )
    settings["environment"] = dict(
        _state["environment"] or {}, **{k: os.environ[k] for k in RECORDED if k in os.environ}
    )
    return settings


def openmp_threads():
    """The threads MXNet's OpenMP runs (GNU libgomp, which libmxnet links): the runtime's own
    setting, which is not the variable where libgomp loaded before setup() set it (an R
    worker's, at R's start); None where libgomp cannot be opened."""
    try:
        return ctypes.CDLL("libgomp.so.1").omp_get_max_threads()
    except (OSError, AttributeError):
        return None


def context():
    """The first (or only) context: where inference runs and the model's state is read."""
    return _state["context"]


def contexts():
    """Every context of the run: one per device (devices=N trains data-parallel over them)."""
    return list(_state["contexts"])


def kvstore():
    """What sums the contexts' gradients: 'device' on GPUs (reduced on the GPUs themselves,
    peer to peer where it can), 'local' on a CPU (reduced in host memory)."""
    return "device" if _state["context"].device_type == "gpu" else "local"


def precision():
    return _state["precision"]


def sync():
    """Wait for every operation the asynchronous engine has queued (on every device)."""
    import mxnet as mx

    mx.nd.waitall()


def versions():
    """Read without importing mxnet (which must not load before configure() set its threads);
    its build features (oneDNN, CUDA, cuDNN) are in the settings setup() returns."""
    found = {}
    for dist in ("mxnet", "mxnet-mkl", "mxnet-cu112", "mxnet-cu117"):
        try:
            found[dist] = metadata.version(dist) if metadata else None
        except metadata.PackageNotFoundError:
            pass
    return found


def memory_stats():
    ctx = _state["context"]
    if ctx is None or ctx.device_type != "gpu":
        return None
    import mxnet as mx

    free, total = mx.context.gpu_memory_info(ctx.device_id)
    return {"used_bytes_at_end": total - free, "total_bytes": total}


def peak_flops(precision, size=2048):
    """Measured dense matrix-multiply throughput (FLOP/s; int8: operations/s), untimed, after
    the benchmark; None for bf16: MXNet has no bf16 dot outside AMP graphs, and an fp32 figure
    would pass for a bf16 peak (the host peak, `python -m bench peak`, takes the best of every
    framework). int8: oneDNN's quantized FullyConnected, uint8 data times int8 weights, the
    kernel family a quantized network runs."""
    import mxnet as mx

    from bench_shared.timing import matmul_flops, peak_rate

    if precision == "bf16":
        return None
    if precision == "int8":
        return int8_peak(size) if _state["context"].device_type == "cpu" else None
    dtype = "float16" if precision == "fp16" else "float32"
    a = mx.nd.random.normal(shape=(size, size), ctx=_state["context"], dtype=dtype)
    b = mx.nd.random.normal(shape=(size, size), ctx=_state["context"], dtype=dtype)

    def work(n):
        for _ in range(n):
            mx.nd.dot(a, b)
        mx.nd.waitall()

    return peak_rate(work, matmul_flops(size))


def int8_peak(size):
    """peak_flops("int8"): quantized_fully_connected of size x size operands on the CPU."""
    import mxnet as mx
    import numpy as np

    from bench_shared.timing import matmul_flops, peak_rate

    rng = np.random.RandomState(0)
    data = mx.nd.array(rng.randint(0, 256, (size, size)), dtype="uint8")
    weight = mx.nd.array(rng.randint(-127, 128, (size, size)), dtype="int8")
    ranges = [mx.nd.array([low]) for low in (0.0, 1.0, -1.0, 1.0)]  # data's, weight's

    def work(n):
        for _ in range(n):
            out = mx.nd.contrib.quantized_fully_connected(
                data, weight, *ranges, num_hidden=size, no_bias=True
            )
        mx.nd.waitall()
        return out

    return peak_rate(work, matmul_flops(size))
