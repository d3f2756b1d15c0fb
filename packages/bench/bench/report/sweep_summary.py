"""The end of a sweep: the table of every result in its directory, printed and written
(summary.md, results.csv), and the Hydra callback that holds the sweep directory's lock while
the sweep runs and writes the summary when it ends."""
import contextlib
from pathlib import Path

from hydra.experimental.callback import Callback
from omegaconf import OmegaConf

from bench_shared import contract

from .. import files
from ..run import sweep
from . import collection, scaling, tables

last_statuses = None  # the statuses of the sweep that ended last in this process
current_dir = None  # the directory of the sweep this process launched, once it started
# the sweep directory's lock, held from the sweep's start to its end: here, not on the
# callback, which submitit pickles with every job
_lock = contextlib.ExitStack()


def summarise(sweep_dir: Path):
    """Print and write (summary.md, results.csv) the table of every result in the sweep."""
    global last_statuses
    found = collection.collect([sweep_dir], interrupted=True)  # the sweep's own state, all of it
    last_statuses = [run.status for run in found]
    if not found:
        print(f"sweep {sweep_dir}: no results", flush=True)
        return
    table = collection.Grid(found)
    text = tables.markdown(table)
    sentences = tables.comparisons_markdown(table)
    if sentences:
        text += "\n" + sentences
    scaled = scaling.pairs(table)  # `-m devices=1,2`: the speed-up beside the table
    if scaled:
        text += "\n" + scaling.markdown(scaled)
    files.write_text(sweep_dir / "summary.md", text)
    tables.write_csv(found, sweep_dir / "results.csv", scaling.efficiency_of(table))
    print(f"\n{text}\nsummary: {sweep_dir / 'summary.md'} (charts and baselines: "
          f"python -m bench report {sweep_dir})", flush=True)
    print(counts_line(last_statuses, sweep.progress.wall()), flush=True)


def counts_line(statuses, wall=None):
    """`sweep: 4 results in 1:23: 3 ok, 1 failed` (the statuses in contract order)."""
    order = [s for s in contract.STATUSES if s in statuses]
    counts = ", ".join(f"{statuses.count(s)} {s.replace('_', ' ')}" for s in order)
    took = f" in {sweep.clock(wall)}" if wall is not None else ""
    return f"sweep: {len(statuses)} results{took}: {counts}"


class SweepSummary(Callback):
    """Registered in conf/config.yaml (hydra.callbacks). At the end of a multirun it reads the
    result files in the sweep directory, so it works whether the jobs ran in this process
    (basic launcher) or elsewhere (submitit). It holds the sweep directory's lock while the
    sweep runs: two sweeps into one directory would run and overwrite the same jobs."""

    def on_multirun_start(self, config, **kwargs):
        global current_dir
        current_dir = Path(str(config.hydra.sweep.dir)).absolute()
        try:
            params = config.hydra.sweeper.get("params")
            params = OmegaConf.to_container(params, resolve=True) if params else {}
            total = sweep.count_jobs(config.hydra.overrides.task, params)
        except Exception:  # an override Hydra will reject itself, in its own words
            total = None
        sweep.progress.start(total)
        _lock.enter_context(files.locked(
            current_dir / ".sweep", waiting="(another sweep into the same directory; Ctrl-C "
            "stops, sweep=<name> runs into another directory)"))

    def on_multirun_end(self, config, **kwargs):
        try:
            summarise(Path(str(config.hydra.sweep.dir)))
        finally:
            _lock.close()
