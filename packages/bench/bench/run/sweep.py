"""Sweeps: a stable directory per sweep, resuming (skip what is done), the line per job, and
the sweep directory's lock; the end-of-sweep summary is bench.report.sweep_summary's, handed
in by the command line.

A sweep's directory is `results/sweeps/<name>`: `sweep=<name>` when given, else a name derived
from the command line's overrides, so that running the same command again finds its jobs
again (each job's subdirectory is Hydra's `override_dirname`). A job whose result.json says
`ok` or `unsupported` for the same config is skipped; any other (failed, invalid, interrupted,
not installed) runs again; `redo=true` runs everything again.
"""

import contextlib
import contextvars
import hashlib
import re
import time
from pathlib import Path

from hydra.experimental.callback import Callback
from omegaconf import OmegaConf

from .. import conf_dir, files
from . import environments, record, summary
from .config import override_key

# top-level keys that steer the sweep (or watch the host) but are not part of a job's identity
SWEEP_KEYS = ("redo", "sweep", "comparison", "rounds", "round", "watch")
# overrides left out of a sweep's name: comparison=smoke names its sweep, require_all does not;
# how the rounds run or the host is watched neither
UNNAMED_KEYS = ("redo", "sweep", "comparison.require_all")
UNNAMED_PREFIXES = ("rounds.", "round.", "watch.")
DONE = ("ok", "unsupported")  # statuses a re-run keeps; the others are retried
MAX_NAME = 120


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
        safe = f"{safe[: MAX_NAME - 11]}-{hashlib.sha1(name.encode()).hexdigest()[:10]}"
    return safe


def sweep_name(sweep, overrides) -> str:
    """The sweep's directory name: `sweep` itself, else the sorted command-line overrides."""
    if sweep:
        check_name(sweep)
        return str(sweep)
    kept = sorted(
        str(o)
        for o in overrides
        if override_key(str(o)) not in UNNAMED_KEYS
        and not override_key(str(o)).startswith(UNNAMED_PREFIXES)
    )
    return bounded_name("_".join(kept) or "defaults")


def job_name(override_dirname) -> str:
    """A job's directory inside the sweep: Hydra's override_dirname, made safe and bounded (a
    value holding `/..` would otherwise write outside the sweep; a dozen overrides, a name too
    long for the file system). The result keeps the full overrides."""
    return bounded_name(str(override_dirname) or "defaults")


def group_options(group: str, require_all=True) -> str:
    """Every option of a config group (conf/<group>/*.yaml), comma-separated for a sweep: a
    framework joins the full comparison by having its config file. For the framework group
    without require_all (comparison.require_all=false), only those installed here, and a line
    saying which were left out and how to build them."""
    names = sorted(p.stem for p in (conf_dir() / group).glob("*.yaml"))
    if group != "framework" or require_all:
        return ",".join(names)
    found = {name: environments.installed(name) for name in names}
    left_out = [name for name, (ok, _) in found.items() if not ok]
    if left_out and not _said:
        _said.append(True)
        print(
            f"comparison: {len(names) - len(left_out)} of {len(names)} frameworks are "
            f"installed here; left out: {', '.join(left_out)} (`python -m bench envs` says "
            f"how to build each; comparison.require_all=true runs them too, recorded as not "
            f"installed)",
            flush=True,
        )
    kept = [name for name in names if name not in left_out]
    if not kept:
        raise ValueError(
            "comparison: no framework is installed here (`python -m bench envs` "
            "says how to build each)"
        )
    return ",".join(kept)


_said = []  # the left-out line is printed once per process


def install():
    """The resolvers conf/config.yaml names a sweep's directories with, and the comparison
    presets their frameworks (called by bench.run.hydra_hooks.install, never on import).
    bench_sweep_name is cached: OmegaConf caches on the literal arguments ("${sweep}",
    "${hydra.overrides.task}"), and Hydra copies the sweep's cache into every job's config (as
    for ${now:}), so each job, whose own hydra.overrides.task holds only its single values,
    gets the sweep's directory."""
    OmegaConf.register_new_resolver("bench_sweep_name", sweep_name, use_cache=True, replace=True)
    OmegaConf.register_new_resolver("bench_options", group_options, replace=True)
    OmegaConf.register_new_resolver("bench_job_name", job_name, replace=True)


# keys that only say how the host was watched, nested in a group
WATCH_KEYS = ("preset.canary_s",)
# keys a later schema added, with the value a result from before them had in effect
ADDED = {"repeat": 0, "twin": None}


def comparable(config):
    """A composed config without the keys that steer the sweep (not the job's identity)."""
    return {k: v for k, v in config.items() if k not in SWEEP_KEYS}


def first_difference(old, new):
    old, new = record.flatten(old), record.flatten(new)
    for key in WATCH_KEYS:
        old.pop(key, None)
        new.pop(key, None)
    for key, default in ADDED.items():
        old.setdefault(key, default)
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
        previous = record.load(path)
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
    print(
        f"skipped, already {status}: {summary.label(previous)} (redo=true runs it again)",
        flush=True,
    )
    return previous


class JobCounter:
    """One line per job of a sweep on this machine — `sweep: job 2 of 4 (task=rnn); 1 finished
    in 0:12, about 0:24 left` — and the wall time for the summary's last line. Plain lines:
    the same in a log, on a terminal and on one of no width. Jobs that run elsewhere
    (submitit) know no total and print none."""

    def __init__(self):
        self.total = None
        self.started = None
        self.finished = 0

    def start(self, total):
        self.total, self.started, self.finished = total, time.monotonic(), 0

    def job(self, index, overrides):
        if self.started is None:
            return
        elapsed = time.monotonic() - self.started
        of = f" of {self.total}" if self.total else ""
        place = {
            override_key(o).removeprefix("round."): o.split("=", 1)[1]
            for o in overrides
            if o.startswith("round.")
        }
        shown = [o for o in overrides if not o.startswith("round.")]
        line = f"sweep: job {index + 1}{of}"
        if place.get("order") == "rounds" and place.get("index", "").isdigit():
            line += f", round {int(place['index']) + 1} of {place.get('of')}"
            if place.get("attempt", "1") != "1":
                line += f", attempt {place['attempt']}"
        line += f" ({' '.join(shown) or 'defaults'})"
        if self.finished:
            line += f"; {self.finished} finished in {clock(elapsed)}"
            if self.total:
                left = elapsed / self.finished * max(self.total - index, 0)
                line += f", about {clock(left)} left"
        print(line, flush=True)

    def done(self):
        if self.started is not None:
            self.finished += 1

    def wall(self):
        return None if self.started is None else time.monotonic() - self.started


def clock(seconds):
    """1:02:03, 2:03 or 0:07."""
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def count_jobs(task_overrides, sweeper_params):
    """The number of jobs a basic sweep of these overrides runs (the command line's, over the
    preset's sweeper params), or None where it cannot be told (a range or interval sweep)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    texts = {override_key(str(o)): str(o) for o in task_overrides}
    for key, value in (sweeper_params or {}).items():
        texts.setdefault(str(key), f"{key}={value}")
    total = 1
    for override in OverridesParser.create().parse_overrides(list(texts.values())):
        if override.is_sweep_override():
            if not override.is_discrete_sweep():
                return None
            total *= len(list(override.sweep_string_iterator()))
    return total


def planned_jobs(total):
    """The number of runs a sweep in rounds planned (bench.run.rounds), for the job lines."""
    outcome = current.get()
    if outcome is not None and outcome.jobs.started is not None:
        outcome.jobs.total = total


# The Outcome that bench.run.main.main() was given, for the length of that call: the
# SweepLock callback, which Hydra makes from conf/config.yaml, reports the sweep to it.
current = contextvars.ContextVar("bench_sweep_outcome", default=None)


class SweepLock(Callback):
    """Registered in conf/config.yaml (hydra.callbacks). In the process that launches a
    multirun it holds the sweep directory's lock from the sweep's start to its end (two
    sweeps into one directory would run and overwrite the same jobs), and tells the outcome
    when the sweep starts (its directory, its number of jobs) and ends (the outcome's
    on_sweep_end, the summary, runs before the lock is released). Submitit pickles callbacks
    with every job: what it holds is left out of the pickle."""

    def __init__(self):
        self.outcome = current.get()
        self._lock = contextlib.ExitStack()

    def __getstate__(self):
        return {}

    def __setstate__(self, state):
        self.__init__()

    def on_multirun_start(self, config, **kwargs):
        directory = Path(str(config.hydra.sweep.dir)).absolute()
        try:
            params = config.hydra.sweeper.get("params")
            params = OmegaConf.to_container(params, resolve=True) if params else {}
            total = count_jobs(config.hydra.overrides.task, params)
        except Exception:  # an override Hydra will reject itself, in its own words
            total = None
        if self.outcome is not None:
            self.outcome.sweep_started(directory, total)
        self._lock.enter_context(
            files.locked(
                directory / ".sweep",
                waiting="(another sweep into the same directory; Ctrl-C "
                "stops, sweep=<name> runs into another directory)",
            )
        )

    def on_multirun_end(self, config, **kwargs):
        try:
            if self.outcome is not None:
                self.outcome.sweep_ended()
        finally:
            self._lock.close()
