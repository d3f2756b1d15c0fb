"""Keras 2 on Theano 1.0.5: Theano's set-up, as framework=lasagne does it
(bench_theano: three shims for Python 3.11 and numpy 1.23, THEANO_FLAGS with
float32, the CPU and the compile directory inside the environment), applied when this module
is imported: before keras, whose Theano backend imports theano. Then, per run, the same
switches as framework=lasagne: threads (OMP_NUM_THREADS for Theano's OpenMP ops, OpenBLAS'
own count) and theano.config.openmp, read by each op when Keras builds the graph."""

import bench_theano

bench_theano.configure()


def configure(run, options):
    if run["device"]["name"] != "cpu":
        raise NotImplementedError(
            "device=%s: Keras 2 on Theano runs on the CPU here (Theano's "
            "GPU back end, libgpuarray, is not installed)" % run["device"]["name"]
        )
    return bench_theano.cpu_setup(options)


def versions():
    return bench_theano.versions()


def peak_flops(precision, size=2048):
    return bench_theano.peak_flops(size)
