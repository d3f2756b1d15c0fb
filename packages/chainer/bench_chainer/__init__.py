"""Chainer for Rosetta Bench: device (NumPy or CuPy), threads, config, the ChainerMN
communicator of a data-parallel run, sync and the model's native tensors."""

import ctypes
import os

import chainer
import numpy as np
from chainer.backends import cuda, intel64

from bench_shared import distributed
from bench_shared.timing import matmul_flops, peak_rate

from .weights import tensors  # noqa: F401  the model's native tensors (weight protocol)

# capabilities and options: conf/framework/chainer.yaml and chainer_ideep.yaml (checked before
# setup() by the runtime, use_ideep's values among them)

# chainer.config.dtype per precision: mixed16 = float16 compute, float32 batch norm and
# (with optimizer.use_fp32_update()) float32 master weights, plus dynamic loss scaling
DTYPES = {"fp32": np.dtype(np.float32), "fp16": chainer.mixed16}

_device = chainer.get_device("@numpy")
_communicator = None


def device():
    return _device


def communicator():
    """The ChainerMN communicator setup() created for a data-parallel run."""
    if _communicator is None:
        raise RuntimeError("no ChainerMN communicator: setup() creates it for devices > 1")
    return _communicator


def setup(run):
    """Choose the device, set BLAS threads and Chainer's global config; return what was applied."""
    global _device
    options = run["framework"]["options"]
    if run["device"]["name"] == "gpu":
        if not cuda.available:
            raise NotImplementedError(
                "device=gpu is not supported by chainer %s here: CuPy is not installed or sees "
                "no GPU (pip install cupy-cudaXXx matching your CUDA)" % chainer.__version__
            )
        _device = chainer.get_device("@cupy:%d" % run["device"]["index"])
    else:
        _device = chainer.get_device("@numpy")
    _device.use()
    if options["use_ideep"] != "never" and not intel64.is_ideep_available():
        raise ValueError(
            "framework.options.use_ideep=%s needs ideep4py, which is not installed in this "
            "environment (it exists for Python <= 3.7 only): build `nox -s chainer_ideep` and "
            "run framework=chainer_ideep, or set framework.options.use_ideep=never"
            % options["use_ideep"]
        )
    # Chainer's own speed switches: argument type checks cost Python time on every call;
    # autotune lets cuDNN pick convolution algorithms (GPU only, off by default in Chainer)
    chainer.global_config.type_check = bool(options["type_check"])
    chainer.global_config.autotune = bool(options["autotune"])
    chainer.global_config.use_ideep = options["use_ideep"]
    chainer.global_config.dtype = DTYPES[run["precision"]]
    threads = options["threads"] or len(os.sched_getaffinity(0))
    pools = _thread_pools()
    for set_threads, _ in pools.values():
        set_threads(threads)
    np.random.seed(run["seed"])  # Chainer's initialisers draw from NumPy's global generator
    if _device.xp is not np:
        _device.xp.random.seed(run["seed"])
    joined = join_mpi(run)
    return {
        "device": str(_device),
        "device_name": (
            cuda.cupy.cuda.runtime.getDeviceProperties(_device.device.id)["name"].decode()
            if _device.xp is not np
            else None
        ),
        "threads": threads,
        "thread_pools": {name: get() for name, (_, get) in sorted(pools.items())},
        "type_check": chainer.config.type_check,
        "autotune": chainer.config.autotune,
        "use_ideep": chainer.config.use_ideep,
        "dtype": str(chainer.config.dtype),
        "use_cudnn": chainer.config.use_cudnn,
        "chainermn": joined,
    }


def versions():
    info = {
        "chainer": chainer.__version__,
        "numpy": np.__version__,
        "cupy": None,
        "cuda": None,
        "cudnn": None,
        "ideep": (
            getattr(intel64.ideep, "__version__", "1.x") if intel64.is_ideep_available() else None
        ),
    }
    if cuda.available:
        info.update(
            cupy=cuda.cupy.__version__,
            cuda=cuda.cupy.cuda.runtime.runtimeGetVersion(),
            cudnn=cuda.cupy.cuda.cudnn.getVersion() if cuda.cudnn_enabled else None,
        )
    return info


def sync():
    """Wait for the GPU (CuPy launches kernels asynchronously); NumPy is synchronous."""
    if _device.xp is not np:
        _device.device.synchronize()


def count_parameters(model):
    """Trainable parameters (batch norm's avg_mean/avg_var are persistent values, not counted)."""
    return int(sum(p.size for p in model.net.params()))


def memory_stats():
    if _device.xp is np:
        return None
    pool = cuda.cupy.get_default_memory_pool()
    return {"pool_total_bytes": pool.total_bytes()}  # CuPy's pool keeps its peak until freed


def peak_flops(precision, size=2048):
    """Measured dense matrix-multiply FLOP/s on the device: the utilisation denominator."""
    xp = _device.xp
    dtype = np.float16 if precision == "fp16" else np.float32
    a = xp.asarray(np.random.RandomState(0).rand(size, size), dtype)

    def work(n):
        for _ in range(n):
            a.dot(a)
        sync()

    return peak_rate(work, matmul_flops(size))


# thread pools of native libraries Chainer's CPU path runs in: file name parts, functions
THREAD_POOLS = {
    # NumPy's bundled OpenBLAS (convolutions via im2col + tensordot, matmuls); its wheels
    # export the ILP64 names with the suffix 64_
    "openblas": (
        ("openblas",),
        [
            ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
            ("openblas_set_num_threads", "openblas_get_num_threads"),
        ],
    ),
    # iDeep's OpenMP runtime (MKL-DNN kernels), when ideep4py is loaded
    "openmp": (("iomp", "gomp"), [("omp_set_num_threads", "omp_get_max_threads")]),
}


def _thread_pools():
    """{pool: (set, get)} for the loaded libraries, found in /proc/self/maps and set at run
    time (NumPy is imported before this package, so environment variables come too late)."""
    with open("/proc/self/maps") as maps:
        paths = sorted({line.split()[-1] for line in maps if "/" in line})
    pools = {}
    for pool, (parts, functions) in THREAD_POOLS.items():
        for path in paths:
            name = os.path.basename(path)
            if not any(part in name for part in parts):
                continue
            lib = ctypes.CDLL(path)
            for set_name, get_name in functions:
                if hasattr(lib, set_name):
                    pools[pool] = (getattr(lib, set_name), getattr(lib, get_name))
                    break
            if pool in pools:
                break
    return pools


# ChainerMN's one CPU communicator: MPI collectives through mpi4py (its GPU ones, e.g.
# pure_nccl, need CuPy and NCCL: conf/framework/chainer.yaml declares data-parallel on the CPU)
COMMUNICATOR = "naive"


def join_mpi(run):
    """devices=N: ChainerMN's communicator over the MPI job that mpiexec started (it must see
    the rank mpiexec gave); None for one device. mpi4py finalises MPI at exit."""
    global _communicator
    proc = distributed.joining(
        run, "mpiexec", "ChainerMN runs over MPI", "conf/framework/chainer.yaml"
    )
    if proc is None:
        return None
    try:
        import chainermn
        from mpi4py import MPI  # noqa: F401  ChainerMN's transport
    except ImportError as exc:
        raise ImportError(
            "devices=%d: ChainerMN needs mpi4py and an MPI library (%s): "
            "`pip install mpi4py` in this environment (nox -s chainer does) and "
            "Open MPI (Debian: apt-get install openmpi-bin)" % (proc["world_size"], exc)
        ) from exc
    _communicator = chainermn.create_communicator(COMMUNICATOR)
    if (_communicator.rank, _communicator.size) != (proc["rank"], proc["processes"]):
        raise RuntimeError(
            "ChainerMN's communicator is rank %d of %d, but mpiexec started rank "
            "%d of %d: is mpi4py built for the MPI of this mpiexec?"
            % (_communicator.rank, _communicator.size, proc["rank"], proc["processes"])
        )
    return {"communicator": COMMUNICATOR, "rank": _communicator.rank, "size": _communicator.size}
