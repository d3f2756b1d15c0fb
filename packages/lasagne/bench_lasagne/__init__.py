"""Theano + Lasagne for Rosetta Bench (framework=lasagne): Theano's set-up (theano_runtime:
its shims and THEANO_FLAGS, shared with Keras 2 on Theano), threads and OpenMP, the seed of
Lasagne's initialisers and dropout, and the model's native tensors.

Theano 1.0.5 (2020) and Lasagne 0.1 (2015) are unmaintained: see README.md for the shims.
"""
import ctypes
import os

from . import theano_runtime

theano_runtime.configure()  # before the first `import theano` (THEANO_FLAGS, the shims)

import numpy as np  # noqa: E402
import theano  # noqa: E402
import theano.tensor as T  # noqa: E402

from . import lasagne_compat  # noqa: E402

lasagne_compat.install_downsample()  # before the first `import lasagne`

import lasagne  # noqa: E402

from .weights import tensors  # noqa: E402,F401  the model's native tensors (weight protocol)

# capabilities and options: conf/framework/lasagne.yaml (checked before setup() by the runtime)

# theano.function's compile seconds of this process, by "<task>.<train|predict>": filled by
# common.Model in build_model and recorded in result.json with the settings (setup() returns
# this dict), apart from every timed region but "build"
compile_seconds = {}


def sync():
    """Theano's CPU functions return when their work is done: nothing is queued."""


def versions():
    info = theano_runtime.versions()
    info["lasagne"] = lasagne.__version__
    return info


def _scipy_openblas():
    """scipy's OpenBLAS, the BLAS Theano's C ops link (theano_runtime), opened by path: the
    same handle as the loaded library's."""
    found = theano_runtime.scipy_openblas()
    if found is None:
        return None
    directory, name = found
    return ctypes.CDLL(os.path.join(directory, "lib%s.so" % name))


def setup(run):
    """Threads, OpenMP and the seed; return what was applied (with THEANO_FLAGS by origin)."""
    options = run["framework"]["options"]
    if not theano.config.cxx:
        raise RuntimeError("Theano found no C++ compiler (g++): without one it runs every op in "
                           "Python, orders of magnitude slower; install g++ (apt-get install g++)")
    threads = options["threads"] or len(os.sched_getaffinity(0))
    # Theano's OpenMP ops (CorrMM's im2col + GEMM per image, large elementwise ops) are built
    # with -fopenmp; GNU OpenMP reads OMP_NUM_THREADS when the first such module loads, after
    # this. OpenMP off: the convolution's GEMMs run one after the other on OpenBLAS' threads
    theano.config.openmp = bool(options["openmp"])  # read by each op when the graph is built
    os.environ["OMP_NUM_THREADS"] = str(threads)
    blas = _scipy_openblas()
    blas_threads = None
    if blas is not None and hasattr(blas, "openblas_set_num_threads"):
        blas.openblas_set_num_threads(threads)
        blas_threads = blas.openblas_get_num_threads()
    # Lasagne draws initial weights and dropout streams' seeds from this generator
    lasagne.random.set_rng(np.random.RandomState(run["seed"]))
    compile_seconds.clear()
    flags = theano_runtime.applied()
    settings = {
        "device": "cpu",
        "floatX": theano.config.floatX,
        "mode": theano.config.mode,
        "openmp": theano.config.openmp,
        "omp_num_threads": threads,
        "blas_threads": blas_threads,
        "blas_ldflags": theano.config.blas.ldflags,
        "compiledir": theano.config.compiledir,
        "theano_flags": flags["theano_flags"],
        "user_theano_flags": flags["user_theano_flags"],
        "python_scan": flags["python_scan"],
        "compile_seconds": compile_seconds,
    }
    settings.update({k: v for k, v in options.items() if k not in settings})
    return settings


def count_parameters(model):
    """Trainable parameters (SPEC's convention: batch-norm running statistics are not)."""
    return sum(int(p.get_value(borrow=True).size)
               for p in lasagne.layers.get_all_params(model.net, trainable=True))


def memory_stats():
    return None  # the CPU only: the worker records the process's peak RSS


def peak_flops(precision, size=2048):
    """Dense matrix-multiply FLOP/s of a compiled Theano T.dot (Dot22: scipy's OpenBLAS SGEMM)."""
    from bench_shared.timing import matmul_flops, peak_rate

    a = theano.shared(np.random.RandomState(0).standard_normal((size, size)).astype(np.float32))
    matmul = theano.function([], T.dot(a, a).sum())  # the sum keeps the product's C op

    def work(n):
        for _ in range(n):
            matmul()
    return peak_rate(work, matmul_flops(size))
