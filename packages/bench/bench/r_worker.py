"""The R worker of the rows written in R (framework=r_mxnet, r_keras: packages/r): where it is,
and whether this machine can start it (Rscript on PATH, R's reticulate package installed)."""
import functools
import shutil
import subprocess
from pathlib import Path

from .errors import EnvironmentNotFound

R_DIR = Path(__file__).resolve().parents[2] / "r"  # packages/r beside packages/bench
WORKER = R_DIR / "worker.R"
R_PACKAGES = ("reticulate",)
INSTALL = ("install R and reticulate (Debian/Ubuntu: `apt-get install --no-install-recommends "
           "r-base-core r-cran-reticulate`; elsewhere R from CRAN, then "
           "`install.packages(\"reticulate\")`)")
PROBE = ("for (p in commandArgs(TRUE)) if (!requireNamespace(p, quietly = TRUE)) "
         "{ cat(p); quit(status = 3) }")


def rscript():
    path = shutil.which("Rscript")
    if path is None:
        raise EnvironmentNotFound(f"Rscript is not on PATH: {INSTALL}")
    return path


@functools.cache
def _missing_r_packages(path):
    try:
        out = subprocess.run([path, "-e", PROBE, *R_PACKAGES], capture_output=True,
                             text=True, timeout=120, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{path} did not run ({exc})"
    if out.returncode == 3:
        return f"R's {out.stdout.strip()} package is not installed"
    if out.returncode != 0:
        return f"{path} failed: {(out.stderr or out.stdout).strip()[-300:]}"
    return None


# R loads one BLAS for its whole process (Debian: the libblas.so.3 alternative), and every
# library loaded after it that calls cblas_* gets that one. Debian's default is the
# unoptimised reference BLAS; libopenblas0-pthread makes OpenBLAS the alternative.
BLAS_PROBE = 'cat(extSoftVersion()[["BLAS"]])'
FAST_BLAS = ("install an optimised BLAS as R's (Debian/Ubuntu: `apt-get install "
             "--no-install-recommends libopenblas0-pthread`, which becomes the libblas.so.3 "
             "alternative R loads; elsewhere R linked against OpenBLAS or MKL)")


@functools.cache
def blas(path):
    """The BLAS library R loads (its path), or why it is not known."""
    try:
        out = subprocess.run([path, "-e", BLAS_PROBE], capture_output=True, text=True,
                             timeout=120, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({exc})"
    return out.stdout.strip() or f"unknown ({out.stderr.strip()[-200:]})"


def reference_blas(library):
    """R's own BLAS (libRblas) or Debian's reference one (.../blas/libblas.so.3)."""
    name = Path(library).name
    return name.startswith("libRblas") or (name.startswith("libblas.so")
                                           and Path(library).parent.name == "blas")


def check(framework, cblas=False):
    """EnvironmentNotFound naming the fix when framework=<framework>'s R worker cannot start."""
    try:
        path = rscript()
    except EnvironmentNotFound as exc:
        raise EnvironmentNotFound(f"framework={framework} is written in R: {exc}") from None
    if not WORKER.is_file():
        raise EnvironmentNotFound(f"framework={framework}: the R worker {WORKER} is missing "
                                  "(run bench from a checkout: packages/r holds it)")
    missing = _missing_r_packages(path)
    if missing:
        raise EnvironmentNotFound(f"framework={framework} is written in R: {missing}: "
                                  f"{INSTALL}")
    if cblas and reference_blas(blas(path)):
        raise EnvironmentNotFound(
            f"framework={framework}: R's BLAS is the reference BLAS ({blas(path)}), and in the "
            f"R worker's process it takes the framework's own matrix products (cblas_sgemm), "
            f"about 10x slower than from Python: {FAST_BLAS}")
