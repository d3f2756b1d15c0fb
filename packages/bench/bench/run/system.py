"""What some rows need beyond their Python environment — Open MPI, R with reticulate, an old
CPython — and what some tests need (Chromium for the page's, Slurm for the cluster session):
how each is found here and the line that installs it. Read by `python -m bench envs`, by the
run that needs one (its error names the line) and by the noxfile (a session whose dependency
is missing skips, saying the line). A framework lists its own in conf/framework/<fw>.yaml
(`system: [mpi]`).

Standard library only: the noxfile loads this file by path, without bench's dependencies, and
.ci/run runs it as a script to learn which Debian packages to install:

    python3 packages/bench/bench/run/system.py --apt-missing   # the packages of what is missing
"""

import functools
import glob
import os
import shutil
import subprocess
import sys
from collections import namedtuple

APT = "apt-get install --no-install-recommends"
# install: the line a user runs; packages: the Debian packages in it (None: not from apt)
Dependency = namedtuple("Dependency", "title install find packages")


def _run(command, timeout=60):
    try:
        out = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out


@functools.cache
def python_of_version(version):
    """python<version> on PATH, else the newest of pyenv's <version>.x; None when the machine
    has neither."""
    candidates = [shutil.which(f"python{version}")]
    if shutil.which("pyenv"):
        out = _run(["pyenv", "root"])
        root = out.stdout.strip() if out and out.returncode == 0 else ""
        if root:
            candidates += sorted(
                glob.glob(
                    os.path.join(root, "versions", f"{version}.*", "bin", f"python{version}")
                ),
                reverse=True,
            )
    for candidate in filter(None, candidates):
        out = _run([candidate, "--version"])
        if (
            out
            and out.returncode == 0
            and (out.stdout + out.stderr).startswith(f"Python {version}.")
        ):
            return candidate
    return None


@functools.cache
def find_mpi():
    """(mpiexec's path, its version line) where Open MPI's mpiexec is on PATH (its packages
    bring the libraries too), else (None, why not)."""
    path = shutil.which("mpiexec")
    if path is None:
        return None, "mpiexec is not on PATH"
    out = _run([path, "--version"])
    version = ((out.stdout + out.stderr).strip() if out else "") or "no version"
    if "Open MPI" not in version and "OpenRTE" not in version:
        return None, f"{path} is not Open MPI's mpiexec ({version.splitlines()[0]})"
    libraries = _run(["ldconfig", "-p"]) or _run(["/sbin/ldconfig", "-p"])
    if libraries and "libmpi_cxx.so.40 " not in libraries.stdout:  # CNTK's, through its shim
        return None, "Open MPI's C++ library (libmpi_cxx.so.40, libopenmpi3) is not installed"
    return path, version.splitlines()[0]


R_PROBE = (
    "for (p in commandArgs(TRUE)) if (!requireNamespace(p, quietly = TRUE)) "
    "{ cat(p); quit(status = 3) }"
)


@functools.cache
def find_r():
    """(Rscript's path, "R with reticulate") where both are here, else (None, why not)."""
    path = shutil.which("Rscript")
    if path is None:
        return None, "Rscript is not on PATH"
    out = _run([path, "-e", R_PROBE, "reticulate"], timeout=120)
    if out is None:
        return None, f"{path} did not run"
    if out.returncode == 3:
        return None, "R's reticulate package is not installed"
    if out.returncode != 0:
        return None, f"{path} failed: {(out.stderr or out.stdout).strip()[-200:]}"
    if shutil.which("dpkg-query"):  # Debian: R's BLAS for the R rows, the pthread OpenBLAS
        blas = _run(["dpkg-query", "-W", "-f=${Status}", "libopenblas0-pthread"])
        if not blas or "install ok installed" not in blas.stdout:
            return None, "libopenblas0-pthread (R's BLAS for the R rows) is not installed"
    return path, "R with reticulate"


SLURM_COMMANDS = ("slurmctld", "slurmd", "sbatch", "srun", "scontrol", "munged")


def find_slurm():
    """(srun's path, "Slurm and MUNGE") where the daemons and the commands the Slurm session's
    one-host cluster uses are here (daemons in /usr/sbin, off a user's PATH), else (None, which
    are not)."""
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
    absent = [name for name in SLURM_COMMANDS if shutil.which(name, path=path) is None]
    if absent:
        return None, f"no {', '.join(absent)}"
    return shutil.which("srun", path=path), "Slurm and MUNGE"


def find_chromium():
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if browser and driver:
        return browser, "Chromium and ChromeDriver"
    return None, "chromium and chromedriver are not both on PATH"


def _found_python(version):
    def find():
        path = python_of_version(version)
        return (
            (path, f"Python {version}")
            if path
            else (None, f"no python{version} on PATH or in pyenv")
        )

    return find


def _apt(title, packages, find):
    return Dependency(title, f"{APT} {' '.join(packages)}", find, tuple(packages))


DEPENDENCIES = {
    "mpi": _apt("Open MPI", ("openmpi-bin", "libopenmpi3"), find_mpi),
    "r": _apt(
        "R and reticulate", ("r-base-core", "r-cran-reticulate", "libopenblas0-pthread"), find_r
    ),
    "python3.6": Dependency("CPython 3.6", "pyenv install 3.6.15", _found_python("3.6"), None),
    "python3.7": Dependency("CPython 3.7", "pyenv install 3.7.17", _found_python("3.7"), None),
    "python3.11": Dependency("CPython 3.11", "pyenv install 3.11.7", _found_python("3.11"), None),
    "chromium": _apt("Chromium", ("chromium", "chromium-driver"), find_chromium),
    # the Slurm session's cluster (noxfile.py `slurm`): daemons, commands and MUNGE's auth
    "slurm": _apt("Slurm", ("slurm-wlm", "munge"), find_slurm),
}


def missing(name):
    """None when dependency `name` is here, else the line saying what is missing and the
    command that installs it."""
    dependency = DEPENDENCIES[name]
    path, detail = dependency.find()
    if path:
        return None
    return f"{dependency.title} is missing ({detail}): `{dependency.install}`"


def apt_missing():
    """The Debian packages of every dependency that is missing here (what .ci/run installs)."""
    return [
        package
        for dependency in DEPENDENCIES.values()
        if dependency.packages and not dependency.find()[0]
        for package in dependency.packages
    ]


if __name__ == "__main__":
    if sys.argv[1:] != ["--apt-missing"]:
        sys.exit("usage: python3 system.py --apt-missing")
    print(" ".join(apt_missing()))
