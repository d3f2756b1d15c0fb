"""Keras 2 on CNTK 2.7: CNTK's runtime set-up, as framework=cntk does it (bench_cntk: the MPI
libraries' check, CPU device, CNTK's thread count, its random seed; its versions and matmul
peak). Imported before keras: Keras' CNTK backend imports cntk, which needs the MPI shim."""

import bench_cntk
from bench_cntk import peak_flops, versions  # noqa: F401

bench_cntk.cntk_module()  # CNTK's import error, naming the MPI fix, before keras hides it


def configure(run, options):
    return bench_cntk.setup(run)
