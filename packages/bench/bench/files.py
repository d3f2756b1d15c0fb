"""Files several processes share: one lock and one atomic writer, used for every cache entry,
download, sweep directory, tuning profile, host peak and result.

`locked(path)`: an exclusive flock on `<path>.lock` (across processes and, on Linux, across
NFS clients). The holder writes who it is into the lock file, so a waiter can name it; a waiter
gives up after its timeout (0: at once; None: never), saying who holds it. The holder removes
the lock file when it is done, and a waiter that then holds a lock on a removed file opens
the new one, so two processes never both hold the lock.

`write_json(path, obj)` / `write_bytes(path, data)`: a temporary file beside the target,
flushed to disk (fsync), then renamed over it: a reader sees the old file or the new one,
never half of one, even after a crash or power loss.

`check_writable(directory, ...)`: a command's output directory tried before it starts anything
(NotWritable, one sentence); `path_problem(exc)`: an OSError on a path as that sentence (a file
where a directory must be, a read-only file system, no permission, no space).
"""

import contextlib
import errno
import fcntl
import json
import os
import re
import socket
import sys
import tempfile
import time
from pathlib import Path

from .errors import BenchError

POLL_S = 0.2


class LockBusy(BenchError):
    """Another process held a lock for longer than this one waits; the message names it."""


class NotWritable(BenchError):
    """A directory a command must write cannot be written; the message names it and why."""


def _holder(handle):
    handle.seek(0)
    return handle.read().strip() or "another process"


def lock_path(path: Path) -> Path:
    return Path(str(path) + ".lock")


@contextlib.contextmanager
def locked(path: Path, timeout_s=None, waiting="", hint=""):
    """Hold the lock of `path` (the file `<path>.lock`) for the block.

    timeout_s: how long to wait for another holder (0: not at all; None: as long as it takes;
    Ctrl-C and SIGTERM interrupt the wait). waiting: what the waiter prints once (to stderr)
    after the holder's name, e.g. "(preparing the same data)". hint: added to LockBusy's
    message (the option that sets the timeout, what to do)."""
    lock = lock_path(path)
    lock.parent.mkdir(parents=True, exist_ok=True)
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    said = False
    while True:
        handle = open(lock, "a+")
        try:
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if deadline is not None and time.monotonic() >= deadline:
                        waited = f" after {timeout_s:g} s" if timeout_s else ""
                        raise LockBusy(
                            f"{lock} is held by {_holder(handle)}{waited}"
                            + (f"; {hint}" if hint else "")
                        ) from None
                    if not said and waiting is not None:
                        print(
                            f"waiting for {lock}, held by {_holder(handle)} {waiting}".rstrip(),
                            file=sys.stderr,
                            flush=True,
                        )
                        said = True
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
        handle.write(
            f"pid {os.getpid()} on {socket.gethostname()} since "
            f"{time.strftime('%Y-%m-%d %H:%M:%S')}\n"
        )
        handle.flush()
        yield
    finally:
        with contextlib.suppress(OSError):
            lock.unlink()
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


def write_bytes(path: Path, data: bytes, mode=None):
    """Write `data` to `path` whole or not at all (temporary file, fsync, rename); `mode`: the
    file's permissions (default: a new file's under the umask)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, umask_mode(0o666) if mode is None else mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # the rename itself, durable
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


def dumps(obj) -> str:
    """Strict JSON (a NaN or inf is written as a string, "nan", never as a bare NaN), sorted."""
    from bench_shared import jsonsafe  # numpy's: imported where a file is written, not at start

    return json.dumps(jsonsafe.finite(obj), indent=1, sort_keys=True, default=str, allow_nan=False)


def write_json(path: Path, obj):
    write_bytes(path, (dumps(obj) + "\n").encode())


def write_text(path: Path, text: str):
    write_bytes(path, text.encode())


def read_json(path: Path, rebuild=""):
    """The file's JSON, or None when there is no file; a file that is not JSON is a ValueError
    naming it and what rebuilds it (`rebuild`, e.g. "run `python -m bench peak --redo`")."""
    try:
        text = Path(path).read_bytes()
    except (FileNotFoundError, NotADirectoryError):  # not there, or a file above it
        return None
    try:
        return json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        what = rebuild or "delete it to start again"
        raise ValueError(f"{path} is not JSON ({str(exc)[:120]}); {what}") from None


# numpy's errors writing an array to a full file system, which carry no errno: a short write,
# and the space it reserves first being refused
NUMPY_NO_SPACE = re.compile(r"\d+ requested and \d+ written|Not enough free space to write")


def no_space(exc) -> bool:
    """Whether an error writing a file says its file system is full: ENOSPC, a quota
    (EDQUOT), or numpy's words for it (NUMPY_NO_SPACE)."""
    return (
        getattr(exc, "errno", None) in (errno.ENOSPC, errno.EDQUOT)
        or NUMPY_NO_SPACE.search(str(exc)) is not None
    )


def umask_mode(mode=0o777):
    """mode as a new file or directory gets it under the process's umask."""
    umask = os.umask(0)
    os.umask(umask)
    return mode & ~umask


def path_problem(exc: OSError):
    """What an OSError on a path means, as a sentence naming the path: a file where a
    directory must be, a read-only file system, no permission, no space; None when the error
    names no path."""
    if getattr(exc, "filename", None) is None:
        return None
    path = Path(os.fsdecode(exc.filename))
    if exc.errno in (errno.ENOTDIR, errno.EEXIST):
        blocker = next((p for p in (path, *path.parents) if p.exists() and not p.is_dir()), None)
        if blocker is not None:
            return f"{blocker} is a file, where a directory is needed"
    if exc.errno == errno.EROFS:
        return f"{path} is on a read-only file system"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"{path} cannot be written by this user (permission denied)"
    if no_space(exc):
        return f"no space left on the file system of {path}"
    return f"{path}: {exc.strerror or exc}"


def _lexists(path):
    try:
        return os.path.lexists(path)
    except OSError:  # a name too long to look up is not there
        return False


def check_writable(directory: Path, what: str, elsewhere: str):
    """Whether this process can create `directory` (and what it holds) by writing a file into
    its nearest existing ancestor, created and removed at once, so that a command finds out
    before it starts anything; creates no directory. NotWritable saying `what` the directory
    is, why it cannot be written, and `elsewhere` (the option that moves it)."""
    directory = Path(directory).absolute()
    existing = next(p for p in (directory, *directory.parents) if _lexists(p))
    try:
        longest = os.pathconf(existing, "PC_NAME_MAX")
    except (OSError, ValueError):
        longest = 255
    for part in directory.relative_to(existing).parts:
        if len(os.fsencode(part)) > longest:
            raise NotWritable(
                f"{what} cannot be written: a name in its path is {len(os.fsencode(part))} "
                f"bytes long, more than the {longest} a file name may have there "
                f"({part[:40]}...); {elsewhere}"
            )
    try:
        if not existing.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", str(directory))
        fd, probe = tempfile.mkstemp(prefix=".bench-write-check-", dir=existing)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        if exc.filename is not None and Path(os.fsdecode(exc.filename)).parent == existing:
            exc.filename = str(existing)  # the probe's name says nothing
        raise NotWritable(
            f"{what} cannot be written: {path_problem(exc) or exc}; {elsewhere}"
        ) from None


def write_whole(out: Path, make, manifest_name: str):
    """Write a set of files into the directory `out` whole: `make(directory)` writes them into
    a directory of their own inside `out`, then, holding `out`'s lock, they replace the files
    of the set before, and those the set before had (listed in `out/manifest_name`) and this
    one has not are removed; no other file is touched. Two writers into one directory at once
    leave one set, never a mixture (a report's directory: bench.report.command)."""
    import shutil

    out.mkdir(parents=True, exist_ok=True)
    aside = Path(tempfile.mkdtemp(prefix=".report-", dir=out))
    try:
        make(aside)
        written = sorted(p.name for p in aside.iterdir() if p.is_file())
        with locked(out / ".report", waiting="(another report writing there)"):
            manifest = out / manifest_name
            try:
                before = json.loads(manifest.read_text())
            except (OSError, ValueError):
                before = []
            for name in before if isinstance(before, list) else []:
                if isinstance(name, str) and name not in written and "/" not in name:
                    with contextlib.suppress(OSError):
                        (out / name).unlink()
            for name in written:
                (aside / name).replace(out / name)
            write_json(manifest, written)
    finally:
        shutil.rmtree(aside, ignore_errors=True)
