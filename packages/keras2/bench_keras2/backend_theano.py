"""Keras 2 on Theano 1.0.5: Theano's set-up, as framework=lasagne does it
(bench_lasagne.theano_runtime: three shims for Python 3.11 and numpy 1.23, THEANO_FLAGS with
float32, the CPU and the compile directory inside the environment), applied when this module
is imported: before keras, whose Theano backend imports theano. Then, per run, the same
switches as framework=lasagne: threads (OMP_NUM_THREADS for Theano's OpenMP ops, OpenBLAS'
own count) and theano.config.openmp, read by each op when Keras builds the graph."""
import ctypes
import os

import numpy as np

from bench_lasagne import theano_runtime
from bench_shared.timing import matmul_flops, peak_rate

theano_runtime.configure()

import theano  # noqa: E402


def configure(run, options):
    if run["device"]["name"] != "cpu":
        raise NotImplementedError("device=%s: Keras 2 on Theano runs on the CPU here (Theano's "
                                  "GPU back end, libgpuarray, is not installed)"
                                  % run["device"]["name"])
    if not theano.config.cxx:
        raise RuntimeError("Theano found no C++ compiler (g++): without one it runs every op in "
                           "Python, orders of magnitude slower; install g++ (apt-get install g++)")
    threads = options["threads"] or len(os.sched_getaffinity(0))
    theano.config.openmp = bool(options["openmp"])
    os.environ["OMP_NUM_THREADS"] = str(threads)  # GNU OpenMP reads it when its first op loads
    blas = _scipy_openblas()
    blas_threads = None
    if blas is not None and hasattr(blas, "openblas_set_num_threads"):
        blas.openblas_set_num_threads(threads)
        blas_threads = blas.openblas_get_num_threads()
    flags = theano_runtime.applied()
    return {"device": "cpu", "floatX": theano.config.floatX, "openmp": theano.config.openmp,
            "omp_num_threads": threads, "blas_threads": blas_threads,
            "blas_ldflags": theano.config.blas.ldflags, "compiledir": theano.config.compiledir,
            "theano_flags": flags["theano_flags"], "python_scan": flags["python_scan"]}


def _scipy_openblas():
    """scipy's OpenBLAS, the BLAS Theano's C ops link (theano_runtime), opened by path: the
    same handle as the loaded library's."""
    found = theano_runtime.scipy_openblas()
    if found is None:
        return None
    directory, name = found
    return ctypes.CDLL(os.path.join(directory, "lib%s.so" % name))


def versions():
    return theano_runtime.versions()


def peak_flops(precision, size=2048):
    """Measured dense matrix-multiply FLOP/s (a compiled theano.function: Theano's Dot22 on
    scipy's OpenBLAS), the utilisation denominator."""
    a = theano.shared(np.random.RandomState(0).randn(size, size).astype(np.float32))
    product = theano.function([], theano.tensor.dot(a, a).sum())  # the sum keeps the C op

    def work(n):
        for _ in range(n):
            product()  # returns NumPy: the product is done
    return peak_rate(work, matmul_flops(size))
