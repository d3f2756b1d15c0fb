"""Where a run's files go, claimed so that no two runs share a directory.

A single run's directory is named after the second it started and its config; two runs
started in the same second with different overrides (`seed=1`, `seed=2`) would get the same
name, so the directory is created with `mkdir` (which fails when it exists) and a suffix
(`-2`, `-3`, ...) is taken until one is created by this process.

Hydra writes its record of the run (`.hydra/config.yaml`, ...) into the directory before the
run's own code starts; where that fails (a full disk) it would print a traceback, and it prints
the message of a CompactHydraException alone: `save_config`, installed in place of Hydra's
`_save_config` by `install()`, turns the OSError into one.
"""

import functools
import os
from pathlib import Path

import hydra.core.utils
from hydra.errors import CompactHydraException
from omegaconf import OmegaConf

from .. import files

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


def first_run_in(run_dir: Path) -> bool:
    """Mark run_dir as one run's (an exclusive create of .bench-run); False when another run
    marked it first (an explicit hydra.run.dir given twice). A sweep's job directories are
    reused on purpose (resuming) and are not marked."""
    try:
        os.close(os.open(Path(run_dir) / ".bench-run", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


class RecordNotWritten(CompactHydraException):
    """Hydra could not write its record of the run into the run directory."""


_hydra_save_config = hydra.core.utils._save_config


@functools.wraps(_hydra_save_config)
def save_config(cfg, filename, output_dir):
    """Hydra's _save_config, with an OSError turned into one line naming the path."""
    try:
        _hydra_save_config(cfg, filename, output_dir)
    except OSError as exc:
        path = Path(output_dir) / filename
        where = "where Hydra records the run before it starts"
        elsewhere = "put the results elsewhere (hydra.run.dir=DIR; a sweep: hydra.sweep.dir=DIR)"
        if files.no_space(exc):
            message = f"no space left on {path.parent}, {where}; free space there, or {elsewhere}"
        else:
            message = f"cannot write {path} ({exc.strerror or exc}), {where}; {elsewhere}"
        raise RecordNotWritten(f"bench: {message}") from None


def install():
    """The resolver that names a single run's directory (cached: Hydra resolves hydra.run.dir
    once per job, and a cached value keeps a later resolution of the same config from claiming
    a second directory), and save_config in place of Hydra's own (run_job calls it by its
    module-global name). Called by bench.run.hydra_hooks.install, never on import."""
    OmegaConf.register_new_resolver("bench_new_dir", claim, use_cache=True, replace=True)
    hydra.core.utils._save_config = save_config
