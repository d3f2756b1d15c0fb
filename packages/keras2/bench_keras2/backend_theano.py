"""Keras 2 on Theano 1.0.5: Theano's set-up, as framework=lasagne does it
(bench_lasagne.theano_runtime: three shims for Python 3.11 and numpy 1.23, THEANO_FLAGS with
float32, the CPU and the compile directory inside the environment), applied when this module
is imported: before keras, whose Theano backend imports theano. Then, per run, the same
switches as framework=lasagne: threads (OMP_NUM_THREADS for Theano's OpenMP ops, OpenBLAS'
own count) and theano.config.openmp, read by each op when Keras builds the graph."""
from bench_lasagne import theano_runtime

theano_runtime.configure()


def configure(run, options):
    if run["device"]["name"] != "cpu":
        raise NotImplementedError("device=%s: Keras 2 on Theano runs on the CPU here (Theano's "
                                  "GPU back end, libgpuarray, is not installed)"
                                  % run["device"]["name"])
    return theano_runtime.cpu_setup(options)


def versions():
    return theano_runtime.versions()


def peak_flops(precision, size=2048):
    return theano_runtime.peak_flops(size)
