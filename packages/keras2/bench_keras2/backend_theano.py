"""Keras 2 on Theano 1.0.5: Theano's set-up, as framework=lasagne does it
(bench_lasagne.theano_runtime: three shims for Python 3.11 and numpy 1.23, THEANO_FLAGS with
float32, the CPU and the compile directory inside the environment), applied when this module
is imported: before keras, whose Theano backend imports theano. Threads: Theano's C ops and
its BLAS (scipy's OpenBLAS) read OMP_NUM_THREADS / OPENBLAS_NUM_THREADS when they load (every
core by default); they are recorded with every result (speed_variables), not set here."""
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
    applied = theano_runtime.applied()
    return {"device": theano.config.device, "floatX": theano.config.floatX,
            "threads": os.environ.get("OMP_NUM_THREADS") or "every core (OpenMP's default)",
            "openmp": bool(theano.config.openmp), "blas": theano.config.blas.ldflags,
            "compile_dir": theano.config.compiledir,
            "theano_flags": {k: v["value"] for k, v in applied["theano_flags"].items()},
            "python_scan": applied["python_scan"]}


def versions():
    return theano_runtime.versions()


def peak_flops(precision, size=2048):
    """Measured dense matrix-multiply FLOP/s (a compiled theano.function: Theano's Gemm on its
    BLAS), the utilisation denominator."""
    a = theano.shared(np.random.RandomState(0).randn(size, size).astype(np.float32))
    product = theano.function([], theano.tensor.dot(a, a))

    def work(n):
        for _ in range(n):
            product()  # returns NumPy: the product is done
    return peak_rate(work, matmul_flops(size))
