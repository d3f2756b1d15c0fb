"""CNTK 2.7 for Rosetta Bench: device and thread setup, joining the MPI job of a data-parallel
run, the device sync and the model's native tensors."""

import atexit
import os

import numpy as np

try:
    import cntk as C
except ImportError as exc:  # CNTK 2.7 links OpenMPI 1.10's sonames (libmpi.so.12, ...)
    if "libmpi" not in str(exc):
        raise
    C, _IMPORT_ERROR = None, str(exc)  # raised by cntk_module(): mpi_shim must run without it

from bench_shared import distributed  # noqa: E402

from .weights import tensors  # noqa: F401,E402  the model's native tensors (weight protocol)

# capabilities and options: conf/framework/cntk.yaml (checked before setup() by the runtime).
# The `cntk` wheel is CPU-only; its CPU kernels refuse float16 convolutions ("FP16
# convolution is only supported via cuDNN"), so fp32 is the one CPU precision.

_settings = {}


def cntk_module():
    """The cntk module, or the import error that names the MPI fix."""
    if C is None:
        from . import mpi_shim

        raise ImportError(
            "CNTK cannot load: %s. To fix it, %s, and put %s on LD_LIBRARY_PATH "
            "(the orchestrator does that for its CNTK worker)."
            % (_IMPORT_ERROR, mpi_shim.FIX, mpi_shim.shim_dir())
        )
    return C


def setup(run):
    """Choose the device, set threads and the random seed; return what was applied."""
    cntk_module()
    options = run["framework"]["options"]
    C.device.try_set_default_device(C.device.cpu())
    threads = options["threads"] or len(os.sched_getaffinity(0))
    C.cntk_py.set_max_num_cputhreads(threads)  # CNTK's own pool and its MKL/OpenMP threads
    # initialisers and dropout masks draw from CNTK's generator; once per process
    if C.cntk_py.get_random_seed() != run["seed"]:
        C.cntk_py.set_fixed_random_seed(run["seed"])
    _settings.update(threads=C.cntk_py.get_max_num_cputhreads(), seed=run["seed"])
    return {
        "device": "cpu",
        "threads": _settings["threads"],
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "mpi": join_mpi(run),
    }


def versions():
    from . import mpi_shim

    shim = mpi_shim.shim_dir()
    return {
        "cntk": cntk_module().__version__,
        "devices": [
            "gpu" if d.type() == C.device.DeviceKind.GPU else "cpu" for d in C.device.all_devices()
        ],
        # the OpenMPI 4 libraries standing in for 1.10's (None: CNTK found its own)
        "mpi_shim": {
            name: os.path.realpath(os.path.join(shim, name)) for name in sorted(mpi_shim.SONAMES)
        }
        if os.path.isdir(shim)
        else None,
    }


def sync():
    """CNTK's CPU evaluation and training calls return when their work is done."""


def count_parameters(model):
    return int(sum(np.prod(p.shape) for p in model.net.parameters))


def memory_stats():
    return None  # CPU only: the worker records the peak resident set size


def peak_flops(precision, size=2048):
    """Measured dense matrix-multiply throughput (FLOP/s): the denominator of the utilisation
    figure. Run after the benchmark, untimed."""
    from bench_shared.timing import matmul_flops, peak_rate

    rng = np.random.RandomState(0)
    x = C.input_variable((size,))
    product = C.times(x, C.constant(rng.randn(size, size).astype(np.float32)))
    a = rng.randn(size, size).astype(np.float32)  # a batch of `size` rows

    def work(n):
        for _ in range(n):
            product.eval({x: a})  # eval returns NumPy: each product is done

    return peak_rate(work, matmul_flops(size))


def join_mpi(run):
    """devices=N: this process's place in the MPI job that mpiexec started, as CNTK's
    communicator (the one its data-parallel learner reduces over) sees it; None for one
    device. MPI is finalised at exit, after rank 0's evaluation."""
    proc = distributed.joining(
        run, "mpiexec", "CNTK's data-parallel learner runs over MPI", "conf/framework/cntk.yaml"
    )
    if proc is None:
        return None
    communicator = C.train.distributed.Communicator
    rank, workers = communicator.rank(), communicator.num_workers()
    if (rank, workers) != (proc["rank"], proc["processes"]):
        raise RuntimeError(
            "CNTK's MPI communicator is rank %d of %d, but mpiexec started rank "
            "%d of %d: is CNTK linked to the MPI of this mpiexec (%s)?"
            % (
                rank,
                workers,
                proc["rank"],
                proc["processes"],
                ", ".join(sorted(versions()["mpi_shim"] or {})),
            )
        )
    atexit.register(communicator.finalize)
    return {
        "communicator": "MPI (data_parallel_distributed_learner)",
        "rank": rank,
        "workers": workers,
    }
