"""Where a run's files go, claimed so that no two runs share a directory, and the lock that
keeps two sweeps from writing into one sweep directory at the same time.

A single run's directory is named after the second it started and its config; two runs
started in the same second with different overrides (`seed=1`, `seed=2`) would get the same
name, so the directory is created with `mkdir` (which fails when it exists) and a suffix
(`-2`, `-3`, ...) is taken until one is created by this process.
"""
import fcntl
import os
import sys
from pathlib import Path

from omegaconf import OmegaConf

MAX_CLAIMS = 1000


def claim(base) -> str:
    """Create a new directory named base (or base-2, base-3, ...) and return its absolute path;
    an existing directory is never reused."""
    base = Path(str(base)).absolute()
    base.parent.mkdir(parents=True, exist_ok=True)
    for n in range(1, MAX_CLAIMS + 1):
        candidate = base if n == 1 else base.with_name(f"{base.name}-{n}")
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        return str(candidate)
    raise FileExistsError(f"{base}: {MAX_CLAIMS} run directories of this name exist already")


# Cached: Hydra resolves hydra.run.dir once per job, and a cached value keeps any later
# resolution of the same config from claiming a second directory.
OmegaConf.register_new_resolver("bench_new_dir", claim, use_cache=True, replace=True)


def first_run_in(run_dir: Path) -> bool:
    """Mark run_dir as one run's (an exclusive create of .bench-run); False when another run
    marked it first (an explicit hydra.run.dir given twice). A sweep's job directories are
    reused on purpose (resuming) and are not marked."""
    try:
        os.close(os.open(Path(run_dir) / ".bench-run", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


class SweepLock:
    """An exclusive flock on <sweep dir>/.sweep.lock, held by the process that launches the
    sweep until it ends; a second sweep into the same directory says who holds it and waits."""

    def __init__(self, sweep_dir: Path):
        self.path = Path(sweep_dir) / ".sweep.lock"
        self.handle = None

    def acquire(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            print(f"sweep {self.path.parent} is being written by {holder}; waiting for it to "
                  f"finish (Ctrl-C stops; sweep=<name> runs into another directory)",
                  file=sys.stderr, flush=True)
            fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} on {os.uname().nodename}\n")
        handle.flush()
        self.handle = handle

    def release(self):
        if self.handle is not None:
            self.handle.truncate(0)
            fcntl.flock(self.handle, fcntl.LOCK_UN)
            self.handle.close()
            self.handle = None
