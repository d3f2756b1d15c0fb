"""A dataset cache directory: prepared once under a lock, published atomically, checked on open.

A prepared entry is a directory of .npy files plus manifest.json, written last; a reader that
sees the manifest sees complete files. Concurrent runs (a multirun, cluster jobs on a shared
file system) take an exclusive lock, so one prepares and the others wait and reuse.

Integrity: the manifest records each file's size, mtime and SHA-256. Opening an entry costs a
stat per file (hashing CIFAR-10's 600 MB on every run would take seconds): a changed size means
the file was altered; a changed mtime alone (e.g. a copy without `cp -p`) triggers a re-hash of
that file, which is accepted and re-stamped if its SHA-256 still matches. `verify=True`
(`prepare --verify`) re-hashes every file. An altered entry is removed and prepared again.

A preparation writes into a temporary directory beside the entry that names its owner,
`<entry>.tmp-<host>-<pid>-<random>`, and renames it to the entry once complete. One killed
outright (SIGKILL: the OOM killer, Slurm after its grace period) cannot remove its temporary;
the next preparation of the entry on the same host removes those whose process no longer runs
(another host's are left alone: whether their owner runs cannot be told from here).
"""

import contextlib
import glob
import hashlib
import json
import os
import re
import shutil
import socket
import sys
import tempfile
from pathlib import Path

import numpy as np

from bench_shared import reference_cache

from .. import files
from ..errors import DataError

MANIFEST = "manifest.json"
CHUNK = 1 << 20


def cache_root(configured=None) -> Path:
    """data.cache_dir, else the project's cache directory (the workers' reference cache's),
    absolute: a relative one is taken from the directory the command started in, since the
    workers start in their own run directories and get the arrays' paths from it."""
    return Path(configured or reference_cache.cache_root()).expanduser().absolute()


def say(message):
    """Cache and download news goes to stderr, beside the run's own output."""
    print(message, file=sys.stderr, flush=True)


LOCK_TIMEOUT_S = 3600.0  # data.lock_timeout_s: how long a run waits for another's preparation


def locked(path: Path, timeout_s=LOCK_TIMEOUT_S):
    """The lock of a cache entry or download (bench.files.locked) as a preparation
    waits for it: saying who holds it, giving up after data.lock_timeout_s."""
    return files.locked(
        path,
        timeout_s,
        waiting=f"(preparing the same data; data.lock_timeout_s={timeout_s:g})",
        hint="data.lock_timeout_s sets how long a run waits; if that process "
        "no longer runs, delete the lock file",
    )


def digests(path: Path, algorithms=("sha256",)):
    """{algorithm: hex digest} of a file, in one pass."""
    hashes = {name: hashlib.new(name) for name in algorithms}
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(CHUNK), b""):
            for h in hashes.values():
                h.update(chunk)
    return {name: h.hexdigest() for name, h in hashes.items()}


def read_manifest(entry: Path):
    """The entry's manifest, or None when it is missing or unreadable (not prepared)."""
    try:
        manifest = json.loads((entry / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) and "arrays" in manifest else None


def _write_manifest(directory: Path, manifest):
    files.write_json(directory / MANIFEST, manifest)


def check(entry: Path, manifest, rehash=False):
    """What is wrong with a prepared entry: [] when every file is as it was prepared."""
    records = manifest.get("files")
    if records is None:  # written before the manifest recorded files: nothing to compare
        return []
    problems, restamp = [], {}
    for name in manifest["arrays"]:
        file = f"{name}.npy"
        record = records.get(file)
        try:
            stat = (entry / file).stat()
        except OSError:
            problems.append(f"{file} is missing")
            continue
        if record is None:
            problems.append(f"{file} has no record in the manifest")
        elif stat.st_size != record["size"]:
            problems.append(f"{file} has {stat.st_size} bytes, not {record['size']}")
        elif rehash or stat.st_mtime_ns != record["mtime_ns"]:
            if digests(entry / file)["sha256"] != record["sha256"]:
                problems.append(f"{file} has changed (SHA-256 differs)")
            elif stat.st_mtime_ns != record["mtime_ns"]:
                restamp[file] = stat.st_mtime_ns
    if restamp and not problems:  # same content, new mtime: remember it, so the next open is
        for file, mtime_ns in restamp.items():  # a stat again
            records[file]["mtime_ns"] = mtime_ns
        with contextlib.suppress(OSError):  # a read-only shared cache stays as it is
            _write_manifest(entry, manifest)
    return problems


def _host():
    """This host's name as a temporary directory's name holds it."""
    return re.sub(r"[^\w.-]", "_", socket.gethostname())


def _temporary_owner(entry: Path, path: Path):
    """(host, pid) of the preparation that made path, a temporary directory of entry, or None
    when path is not one."""
    match = re.fullmatch(re.escape(entry.name) + r"\.tmp-(.+)-(\d+)-[^-]+", path.name)
    return (match.group(1), int(match.group(2))) if match else None


def _runs(pid):
    """Whether process pid exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _remove_stale_temporaries(entry: Path):
    """Remove entry's temporary directories whose preparation, on this host, no longer runs
    (killed before it could remove them); called under the entry's lock."""
    host = _host()
    for path in entry.parent.glob(glob.escape(entry.name) + ".tmp-*"):
        owner = _temporary_owner(entry, path)
        if owner and owner[0] == host and not _runs(owner[1]) and path.is_dir():
            say(f"removing {path}: left by a preparation (pid {owner[1]}) that no longer runs")
            shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def _no_space_is_one_line(entry: Path):
    """A full file system under the cache (ENOSPC, a quota, numpy's short write of an array)
    as one DataError naming where, instead of numpy's byte counts."""
    try:
        yield
    except (OSError, ValueError) as exc:
        if not files.no_space(exc):
            raise
        raise DataError(
            f"no space left on {entry.parent} to prepare {entry.name}; free "
            f"space there, or set data.cache_dir (or BENCH_CACHE_DIR) to a file "
            f"system with room"
        ) from None


def _build(entry: Path, build, description, meta, in_place):
    """Run build into a temporary directory of entry's, write the manifest last, rename the
    directory to entry and return the manifest; the temporary is removed whatever happens."""
    tmp = Path(
        tempfile.mkdtemp(prefix=f"{entry.name}.tmp-{_host()}-{os.getpid()}-", dir=entry.parent)
    )
    # mkdtemp makes it 0700: a shared cache (cluster users) must be readable by others
    os.chmod(tmp, files.umask_mode())
    try:
        arrays = build(tmp) if in_place else build()
        records = {}
        for name, array in arrays.items():
            path = tmp / f"{name}.npy"
            if isinstance(array, np.memmap) and os.path.realpath(
                array.filename
            ) == os.path.realpath(path):
                array.flush()  # build wrote this file itself
            else:
                np.save(path, array)
            stat = path.stat()
            records[path.name] = {
                "size": stat.st_size,
                "mtime_ns": stat.st_mtime_ns,
                **digests(path),
            }
        manifest = {
            "description": description,
            "arrays": {
                name: {"shape": list(a.shape), "dtype": str(a.dtype)} for name, a in arrays.items()
            },
            "files": records,
            **(meta or {}),
        }
        _write_manifest(tmp, manifest)
        if entry.exists():  # a stale entry without manifest: replace it
            shutil.rmtree(entry)
        os.replace(tmp, entry)  # a rename keeps the files' mtimes
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return manifest


def prepared(
    entry: Path,
    build,
    description,
    meta=None,
    verify=False,
    lock_timeout_s=LOCK_TIMEOUT_S,
    in_place=False,
):
    """Return entry's manifest, running build() -> {name: array} first if the entry is missing
    or altered. meta: a dict build may fill in (e.g. the download's source); it is added to
    the manifest. verify: re-hash every file instead of comparing size and mtime.
    lock_timeout_s: how long to wait for another process preparing the same entry.
    in_place: build(directory) gets the entry's unpublished directory and may write an array's
    <name>.npy there itself and return it memory-mapped (np.load(mmap_mode="r")): data larger
    than memory is written once, where it will stay."""
    manifest = read_manifest(entry)
    if manifest is not None and not check(entry, manifest, verify):
        return manifest
    with _no_space_is_one_line(entry), locked(entry, lock_timeout_s):
        manifest = read_manifest(entry)  # another process may have finished meanwhile
        if manifest is not None:
            problems = check(entry, manifest, verify)
            if not problems:
                return manifest
            say(
                f"cache entry {entry} was altered after it was prepared "
                f"({'; '.join(problems)}): removing it and preparing it again"
            )
            shutil.rmtree(entry)
        _remove_stale_temporaries(entry)
        return _build(entry, build, description, meta, in_place)
