"""The OpenMPI soname shim CNTK 2.7 needs: `python -m bench_cntk.mpi_shim`.

CNTK 2.7's wheel links against OpenMPI 1.10's sonames (libmpi.so.12, libmpi_cxx.so.1), which
no current distribution ships. OpenMPI 4 (Debian's `libopenmpi3`: libmpi.so.40,
libmpi_cxx.so.40) exports every MPI symbol CNTK uses, so symlinks with the old names in a
directory of this environment let CNTK load (single process; CNTK's distributed training is
not used). The directory is put on LD_LIBRARY_PATH of the CNTK worker only: the orchestrator
expands `library_path` of conf/framework/cntk.yaml; nothing is installed system-wide.

This module does not need cntk to import (bench_cntk/__init__.py defers a failed CNTK import
to its first use, so that `python -m bench_cntk.mpi_shim` runs where CNTK cannot load yet).
"""

import glob
import os
import subprocess
import sys

# old soname CNTK asks for -> the OpenMPI 4 library that provides its symbols
SONAMES = {"libmpi.so.12": "libmpi.so.40", "libmpi_cxx.so.1": "libmpi_cxx.so.40"}
SEARCH_DIRS = (
    "/usr/lib/x86_64-linux-gnu",
    "/lib/x86_64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/lib/x86_64-linux-gnu/openmpi/lib",
)
FIX = (
    "install OpenMPI 4's libraries (Debian/Ubuntu: `apt-get install libopenmpi3`), then run "
    "`python -m bench_cntk.mpi_shim` with the CNTK environment's python"
)


def shim_dir(prefix=None):
    """Where the symlinks live: inside the environment, never on a system path."""
    return os.path.join(prefix or sys.prefix, "lib", "bench-mpi-shim")


def find_library(name):
    """The path of a shared library: the dynamic linker's cache first, then the usual dirs."""
    try:
        cache = subprocess.run(
            ["ldconfig", "-p"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            universal_newlines=True,
        ).stdout
    except OSError:
        cache = ""
    for line in cache.splitlines():
        parts = line.strip().split(" => ")
        if len(parts) == 2 and parts[0].split(" ")[0] == name and "x86-64" in parts[0]:
            return parts[1]
    for directory in SEARCH_DIRS:
        for path in glob.glob(os.path.join(directory, name)):
            return path
    return None


def create(prefix=None):
    """Make (or refresh) the symlinks; returns the directory. Raises OSError naming the fix."""
    target_dir = shim_dir(prefix)
    found = {old: find_library(new) for old, new in SONAMES.items()}
    missing = sorted(SONAMES[old] for old, path in found.items() if path is None)
    if missing:
        raise OSError("CNTK's MPI shim: %s not found; %s" % (", ".join(missing), FIX))
    if not os.path.isdir(target_dir):
        os.makedirs(target_dir)
    for old, path in sorted(found.items()):
        link = os.path.join(target_dir, old)
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(path, link)
    return target_dir


def main():
    try:
        directory = create()
    except OSError as exc:
        sys.stderr.write("%s\n" % exc)
        return 1
    print(
        "CNTK MPI shim: %s (%s)"
        % (
            directory,
            ", ".join(
                "%s -> %s" % (old, os.readlink(os.path.join(directory, old)))
                for old in sorted(SONAMES)
            ),
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
