"""What a worker's environment holds, as a result records it: every installed distribution
(name and version) and the native libraries the process has loaded (BLAS, oneDNN, MKL,
OpenMP, CUDA, cuDNN, ...), read from the process itself, whatever the framework reports.
NumPy-free and valid Python 3.6 (CNTK's environment), where importlib.metadata does not exist.

    python -m bench_shared.environment     # the distributions, as JSON (bench envs reads it)
"""

import glob
import json
import os
import re
import sys

# shared objects that decide speed, by the start of their file name
NATIVE = (
    "libopenblas",
    "libscipy_openblas",
    "libblas",
    "libmkl",
    "libdnnl",
    "libmkldnn",
    "libiomp",
    "libgomp",
    "libomp",
    "libtbb",
    "libcudart",
    "libcudnn",
    "libcublas",
    "libnccl",
    "libmpi",
    "xla_extension",
    "libtensorflow",
    "libtorch",
    "libCntk",
    "libmxnet",
    "libpaddle",
    "libonnxruntime",
    "libR",
    "libRblas",
    "libflexiblas",
    "libblis",
    "libarmpl",
)


def _normalise(name):
    """A distribution's name as its lock file writes it (PEP 503: lower case, runs of - _ .
    as one -)."""
    return re.sub(r"[-_.]+", "-", name).lower()


# sys.path as the worker started (this module is imported before any framework): a package
# that extends sys.path while it runs (setuptools puts its _vendor directory there when
# imported, as PyTorch's compiler and Paddle do) must not add its vendored copies to the
# environment's distributions, which would read as drift from the lock.
STARTUP_PATH = list(sys.path)


def distributions(path=None):
    """{name: version} of every distribution importable from `path` (default: sys.path as the
    interpreter started), the first found for a name winning (as the import system does)."""
    path = list(STARTUP_PATH if path is None else path)
    found = {}
    try:
        from importlib import metadata
    except ImportError:  # Python < 3.8: read the metadata files
        metadata = None
    if metadata is not None:
        for dist in metadata.distributions(path=path):
            name = dist.metadata["Name"]
            if name and _normalise(name) not in found:
                found[_normalise(name)] = dist.version
        return found
    for entry in path:
        for info in sorted(
            glob.glob(os.path.join(entry or ".", "*.dist-info", "METADATA"))
            + glob.glob(os.path.join(entry or ".", "*.egg-info", "PKG-INFO"))
            + glob.glob(os.path.join(entry or ".", "*.egg-info"))
        ):
            fields = _fields(info if os.path.isfile(info) else os.path.join(info, "PKG-INFO"))
            if fields.get("name") and _normalise(fields["name"]) not in found:
                found[_normalise(fields["name"])] = fields.get("version", "")
    return found


def _fields(path):
    fields = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    break  # the headers end at the first blank line
                key, sep, value = line.partition(":")
                if sep and key.lower() in ("name", "version"):
                    fields[key.lower()] = value.strip()
    except (IOError, OSError):
        pass
    return fields


def native_libraries(maps="/proc/self/maps"):
    """Sorted file names of the speed-deciding shared objects this process has mapped (their
    names carry their versions: libopenblas64_p-r0-...-0.3.23.so, libdnnl.so.3); [] where the
    process's maps cannot be read (not Linux)."""
    names = set()
    try:
        with open(maps) as f:
            for line in f:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                base = os.path.basename(path)
                if base.startswith(NATIVE) and ".so" in base:
                    names.add(base)
    except (IOError, OSError):
        return []
    return sorted(names)


def record():
    """What a result keeps of the worker's environment."""
    return {"distributions": distributions(), "native_libraries": native_libraries()}


if __name__ == "__main__":
    json.dump(
        {
            "python": sys.version.split()[0],
            "executable": sys.executable,
            "distributions": distributions(),
        },
        sys.stdout,
        sort_keys=True,
    )
    sys.stdout.write("\n")
