"""A dataset cache directory: prepared once under a lock, published atomically.

A prepared entry is a directory of .npy files plus manifest.json, written last; a reader that
sees the manifest sees complete files. Concurrent runs (a multirun, cluster jobs on a shared
file system) take an exclusive lock, so one prepares and the others wait and reuse.
"""
import contextlib
import fcntl
import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

MANIFEST = "manifest.json"


def cache_root(configured=None) -> Path:
    if configured:
        return Path(configured).expanduser()
    if os.environ.get("BENCH_CACHE_DIR"):
        return Path(os.environ["BENCH_CACHE_DIR"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "rosetta-bench"


@contextlib.contextmanager
def locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(str(path) + ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def read_manifest(entry: Path):
    try:
        return json.loads((entry / MANIFEST).read_text())
    except (OSError, ValueError):
        return None


def prepared(entry: Path, build, description):
    """Return entry's manifest, running build(tmp_dir) -> {name: array} first if needed."""
    manifest = read_manifest(entry)
    if manifest is not None:
        return manifest
    with locked(entry):
        manifest = read_manifest(entry)  # another process may have finished meanwhile
        if manifest is not None:
            return manifest
        tmp = Path(tempfile.mkdtemp(prefix=entry.name + ".", dir=entry.parent))
        try:
            arrays = build()
            for name, array in arrays.items():
                np.save(tmp / f"{name}.npy", array)
            manifest = {"description": description,
                        "arrays": {name: {"shape": list(a.shape), "dtype": str(a.dtype)}
                                   for name, a in arrays.items()}}
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1))
            if entry.exists():  # a stale entry without manifest: replace it
                shutil.rmtree(entry)
            os.replace(tmp, entry)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return manifest
