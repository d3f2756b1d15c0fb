"""Sweeps: a stable directory per sweep, resuming (skip what is done), the end-of-sweep summary.

A sweep's directory is `results/sweeps/<name>`: `sweep=<name>` when given, else a name derived
from the command line's overrides, so that running the same command again finds its jobs
again (each job's subdirectory is Hydra's `override_dirname`). A job whose result.json says
`ok` or `unsupported` for the same config is skipped; `failed` ones run again; `redo=true`
runs everything again.
"""
import hashlib
import re
from pathlib import Path

from hydra.experimental.callback import Callback
from omegaconf import OmegaConf

from . import conf_dir, results, rundirs, runs, scaling, tables
from .config import override_key

# top-level keys that steer the sweep but are not part of a job's identity
SWEEP_KEYS = ("redo", "sweep")
DONE = ("ok", "unsupported")  # statuses a re-run keeps; `failed` is retried
MAX_NAME = 120

last_statuses = None  # the statuses of the sweep that ended last in this process
current_dir = None  # the directory of the sweep this process launched, once it started


def check_name(sweep) -> None:
    if "/" in str(sweep) or str(sweep) in (".", ".."):
        raise ValueError(f"sweep={sweep}: a sweep name is one directory name, without '/'")


def check_command_line(argv) -> None:
    """A bad sweep name as one line before Hydra starts (from the resolver, Hydra would print
    a traceback)."""
    for arg in argv:
        if arg.startswith("sweep="):
            check_name(arg.split("=", 1)[1])


def bounded_name(name: str) -> str:
    """name as one safe directory name: no path separators, quotes or spaces, at most MAX_NAME
    characters; a name that had to change gets a hash of the original, keeping two different
    names apart."""
    safe = re.sub(r"[^\w.,=+:@%-]", "-", name)
    if safe != name or len(safe) > MAX_NAME:
        safe = f"{safe[:MAX_NAME - 11]}-{hashlib.sha1(name.encode()).hexdigest()[:10]}"
    return safe


def sweep_name(sweep, overrides) -> str:
    """The sweep's directory name: `sweep` itself, else the sorted command-line overrides."""
    if sweep:
        check_name(sweep)
        return str(sweep)
    kept = sorted(str(o) for o in overrides if override_key(str(o)) not in SWEEP_KEYS)
    return bounded_name("_".join(kept) or "defaults")


def job_name(override_dirname) -> str:
    """A job's directory inside the sweep: Hydra's override_dirname, made safe and bounded (a
    value holding `/..` would otherwise write outside the sweep; a dozen overrides, a name too
    long for the file system). The result keeps the full overrides."""
    return bounded_name(str(override_dirname) or "defaults")


def group_options(group: str) -> str:
    """Every option of a config group (conf/<group>/*.yaml), comma-separated for a sweep: a
    framework joins the full comparison by having its config file."""
    return ",".join(sorted(p.stem for p in (conf_dir() / group).glob("*.yaml")))


# Cached: OmegaConf caches on the literal arguments ("${sweep}", "${hydra.overrides.task}"),
# and Hydra copies the sweep's cache into every job's config (as for ${now:}), so each job,
# whose own hydra.overrides.task holds only its single values, gets the sweep's directory.
OmegaConf.register_new_resolver("bench_sweep_name", sweep_name, use_cache=True, replace=True)
OmegaConf.register_new_resolver("bench_options", group_options, replace=True)
OmegaConf.register_new_resolver("bench_job_name", job_name, replace=True)


def comparable(config):
    """A composed config without the keys that steer the sweep (not the job's identity)."""
    return {k: v for k, v in config.items() if k not in SWEEP_KEYS}


def first_difference(old, new):
    old, new = results.flatten(old), results.flatten(new)
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            return f"{key}: {old.get(key)!r} -> {new.get(key)!r}"
    return None


def finished_result(run_dir: Path, config, redo: bool):
    """The stored result a sweep keeps for this job, or None when the job must run.

    Prints one line saying why it is skipped or run again."""
    path = run_dir / "result.json"
    if redo or not path.is_file():
        return None
    try:
        previous = results.load(path)
    except ValueError as exc:
        print(f"running again: {path} is unreadable ({exc})", flush=True)
        return None
    status = previous.get("status")
    if status not in DONE:
        print(f"retrying: the stored result {path} is {status}", flush=True)
        return None
    changed = first_difference(comparable(previous.get("config", {})), comparable(config))
    if changed:
        print(f"running again: the config changed since {path} ({changed})", flush=True)
        return None
    print(f"skipped, already {status}: {results.label(previous)} (redo=true runs it again)",
          flush=True)
    return previous


def summarise(sweep_dir: Path):
    """Print and write (summary.md, results.csv) the table of every result in the sweep."""
    global last_statuses
    found = runs.collect([sweep_dir])
    last_statuses = [run.status for run in found]
    if not found:
        print(f"sweep {sweep_dir}: no results", flush=True)
        return
    grid = runs.Grid(found)
    text = tables.markdown(grid)
    scaled = scaling.pairs(grid)  # `-m devices=1,2`: the speed-up beside the table
    if scaled:
        text += "\n" + scaling.markdown(scaled)
    (sweep_dir / "summary.md").write_text(text)
    tables.write_csv(found, sweep_dir / "results.csv", scaling.efficiency_of(grid))
    print(f"\n{text}\nsummary: {sweep_dir / 'summary.md'} (charts and baselines: "
          f"python -m bench report {sweep_dir})", flush=True)


class SweepSummary(Callback):
    """Registered in conf/config.yaml (hydra.callbacks). At the end of a multirun it reads the
    result files in the sweep directory, so it works whether the jobs ran in this process
    (basic launcher) or elsewhere (submitit). It holds the sweep directory's lock while the
    sweep runs: two sweeps into one directory would run and overwrite the same jobs."""

    def __init__(self):
        self.lock = None

    def on_multirun_start(self, config, **kwargs):
        global current_dir
        current_dir = Path(str(config.hydra.sweep.dir)).absolute()
        self.lock = rundirs.SweepLock(current_dir)
        self.lock.acquire()

    def on_multirun_end(self, config, **kwargs):
        summarise(Path(str(config.hydra.sweep.dir)))
        if self.lock is not None:
            self.lock.release()
