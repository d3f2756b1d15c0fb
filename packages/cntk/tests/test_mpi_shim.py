"""The OpenMPI soname shim: links in the environment, and a clear error without them."""

import os
import subprocess
import sys

import pytest

from bench_cntk import mpi_shim


def test_shim_links_the_old_sonames_to_openmpi4(tmp_path):
    directory = mpi_shim.create(prefix=str(tmp_path))
    assert directory == str(tmp_path / "lib" / "bench-mpi-shim")
    for old, new in mpi_shim.SONAMES.items():
        link = os.path.join(directory, old)
        assert os.path.basename(os.readlink(link)) == new and os.path.exists(link)
    assert mpi_shim.create(prefix=str(tmp_path)) == directory  # again: links refreshed


@pytest.mark.skipif(
    mpi_shim.find_library("libmpi.so.12") is not None,
    reason="OpenMPI 1.10's libmpi.so.12 is installed: CNTK needs no shim",
)
def test_without_the_shim_cntk_fails_with_the_fix(tmp_path):
    env = dict(os.environ, LD_LIBRARY_PATH="")
    out = subprocess.run(
        [sys.executable, "-c", "import bench_cntk; bench_cntk.versions()"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=True,
        cwd=str(tmp_path),
    )
    assert out.returncode == 1
    assert "libmpi" in out.stderr and "apt-get install libopenmpi3" in out.stderr
    assert "python -m bench_cntk.mpi_shim" in out.stderr
