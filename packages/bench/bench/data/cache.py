"""A dataset cache directory: prepared once under a lock, published atomically, checked on open.

A prepared entry is a directory of .npy files plus manifest.json, written last; a reader that
sees the manifest sees complete files. Concurrent runs (a multirun, cluster jobs on a shared
file system) take an exclusive lock, so one prepares and the others wait and reuse.

Integrity: the manifest records each file's size, mtime and SHA-256. Opening an entry costs a
stat per file (hashing CIFAR-10's 600 MB on every run would take seconds): a changed size means
the file was altered; a changed mtime alone (e.g. a copy without `cp -p`) triggers a re-hash of
that file, which is accepted and re-stamped if its SHA-256 still matches. `verify=True`
(`prepare --verify`) re-hashes every file. An altered entry is removed and prepared again.
"""
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench_shared import reference_cache

from ..errors import DataError

MANIFEST = "manifest.json"
CHUNK = 1 << 20


def cache_root(configured=None) -> Path:
    """data.cache_dir, else the project's cache directory (the workers' reference cache's)."""
    if configured:
        return Path(configured).expanduser()
    return Path(reference_cache.cache_root())


def say(message):
    """Cache and download news goes to stderr, beside the run's own output."""
    print(message, file=sys.stderr, flush=True)


LOCK_TIMEOUT_S = 3600.0  # data.lock_timeout_s: how long a run waits for another's preparation
POLL_S = 0.2


class LockTimeout(DataError):
    """Another process held a cache lock for longer than the run waits."""


def _holder(handle):
    handle.seek(0)
    return handle.read().strip() or "another process"


@contextlib.contextmanager
def locked(path: Path, timeout_s=LOCK_TIMEOUT_S):
    """An exclusive lock on path (flock on path.lock: works across processes and, on Linux,
    across NFS clients). A waiter says who holds it and gives up after timeout_s. The holder
    removes the lock file when it is done; a waiter that then holds a lock on a removed file
    opens the new one, so no two processes ever both hold the lock."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = Path(str(path) + ".lock")
    deadline = time.monotonic() + timeout_s
    said = False
    while True:
        handle = open(lock, "a+")
        try:
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if not said:
                        say(f"waiting for {lock}, held by {_holder(handle)} (preparing the "
                            f"same data; data.lock_timeout_s={timeout_s:g})")
                        said = True
                    if time.monotonic() > deadline:
                        raise LockTimeout(
                            f"{lock} is still held by {_holder(handle)} after {timeout_s:g} s "
                            f"(data.lock_timeout_s); if that process no longer runs, delete "
                            f"the file") from None
                    time.sleep(POLL_S)
            try:
                current = os.stat(lock).st_ino == os.fstat(handle.fileno()).st_ino
            except FileNotFoundError:
                current = False
        except BaseException:
            handle.close()
            raise
        if current:
            break
        handle.close()  # locked a file its holder had removed: take the new one
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} on {socket.gethostname()} since "
                     f"{time.strftime('%Y-%m-%d %H:%M:%S')}\n")
        handle.flush()
        yield
    finally:
        with contextlib.suppress(OSError):
            lock.unlink()
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


def umask_mode(mode=0o777):
    """mode as a new file or directory gets it under the process's umask."""
    umask = os.umask(0)
    os.umask(umask)
    return mode & ~umask


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
    tmp = directory / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=1))
    os.replace(tmp, directory / MANIFEST)


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


def prepared(entry: Path, build, description, meta=None, verify=False,
             lock_timeout_s=LOCK_TIMEOUT_S, in_place=False):
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
    with locked(entry, lock_timeout_s):
        manifest = read_manifest(entry)  # another process may have finished meanwhile
        if manifest is not None:
            problems = check(entry, manifest, verify)
            if not problems:
                return manifest
            say(f"cache entry {entry} was altered after it was prepared "
                f"({'; '.join(problems)}): removing it and preparing it again")
            shutil.rmtree(entry)
        tmp = Path(tempfile.mkdtemp(prefix=entry.name + ".", dir=entry.parent))
        # mkdtemp makes it 0700: a shared cache (cluster users) must be readable by others
        os.chmod(tmp, umask_mode())
        try:
            arrays = build(tmp) if in_place else build()
            files = {}
            for name, array in arrays.items():
                path = tmp / f"{name}.npy"
                if (isinstance(array, np.memmap)
                        and os.path.realpath(array.filename) == os.path.realpath(path)):
                    array.flush()  # build wrote this file itself
                else:
                    np.save(path, array)
                stat = path.stat()
                files[path.name] = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns,
                                    **digests(path)}
            manifest = {"description": description,
                        "arrays": {name: {"shape": list(a.shape), "dtype": str(a.dtype)}
                                   for name, a in arrays.items()},
                        "files": files, **(meta or {})}
            _write_manifest(tmp, manifest)
            if entry.exists():  # a stale entry without manifest: replace it
                shutil.rmtree(entry)
            os.replace(tmp, entry)  # a rename keeps the files' mtimes
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return manifest
