"""The R worker of the rows written in R (framework=r_mxnet, r_keras: packages/r): where it is,
and whether this machine can start it (Rscript on PATH, R's reticulate package installed)."""

import functools
import shutil
import subprocess
from pathlib import Path

from ..errors import EnvironmentNotFound
from . import system

R_DIR = Path(__file__).resolve().parents[3] / "r"  # packages/r beside packages/bench
WORKER = R_DIR / "worker.R"


def rscript():
    path = shutil.which("Rscript")
    if path is None:
        raise EnvironmentNotFound(system.missing("r"))
    return path


# R loads one BLAS for its whole process (Debian: the libblas.so.3 alternative), and every
# library loaded after it that calls cblas_* gets that one. Debian's default is the
# unoptimised reference BLAS; libopenblas0-pthread makes OpenBLAS the alternative.
BLAS_PROBE = 'cat(extSoftVersion()[["BLAS"]])'
FAST_BLAS = (
    "install an optimised BLAS as R's (Debian/Ubuntu: `apt-get install "
    "--no-install-recommends libopenblas0-pthread`, which becomes the libblas.so.3 "
    "alternative R loads; elsewhere R linked against OpenBLAS or MKL)"
)


@functools.cache
def blas(path):
    """The BLAS library R loads (its path), or why it is not known."""
    try:
        out = subprocess.run(
            [path, "-e", BLAS_PROBE],
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({exc})"
    return out.stdout.strip() or f"unknown ({out.stderr.strip()[-200:]})"


def reference_blas(library):
    """R's own BLAS (libRblas) or Debian's reference one (.../blas/libblas.so.3)."""
    name = Path(library).name
    return name.startswith("libRblas") or (
        name.startswith("libblas.so") and Path(library).parent.name == "blas"
    )


def check(framework, cblas=False):
    """EnvironmentNotFound naming the fix when framework=<framework>'s R worker cannot start."""
    problem = system.missing("r")
    if problem:
        raise EnvironmentNotFound(f"framework={framework} is written in R: {problem}")
    path = rscript()
    if not WORKER.is_file():
        raise EnvironmentNotFound(
            f"framework={framework}: the R worker {WORKER} is missing "
            "(run bench from a checkout: packages/r holds it)"
        )
    if cblas and reference_blas(blas(path)):
        raise EnvironmentNotFound(
            f"framework={framework}: R's BLAS is the reference BLAS ({blas(path)}), and in the "
            f"R worker's process it takes the framework's own matrix products (cblas_sgemm), "
            f"about 10x slower than from Python: {FAST_BLAS}"
        )
