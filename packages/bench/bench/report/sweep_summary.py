"""The end of a sweep: the table of every result in its directory, printed and written
(summary.md, results.csv). The command line hands `summarise` to the run layer, which calls it
when a sweep ends, still holding the sweep directory's lock (bench.run.sweep.SweepLock)."""
from pathlib import Path

from bench_shared import contract

from .. import files
from ..run import sweep
from . import collection, scaling, tables


def summarise(sweep_dir: Path, wall=None):
    """Print and write (summary.md, results.csv) the table of every result in the sweep;
    their statuses. wall: the sweep's seconds so far, for the last line."""
    found = collection.collect([sweep_dir], interrupted=True)  # the sweep's own state, all of it
    statuses = [run.status for run in found]
    if not found:
        print(f"sweep {sweep_dir}: no results", flush=True)
        return statuses
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
    print(counts_line(statuses, wall), flush=True)
    return statuses


def counts_line(statuses, wall=None):
    """`sweep: 4 results in 1:23: 3 ok, 1 failed` (the statuses in contract order)."""
    order = [s for s in contract.STATUSES if s in statuses]
    counts = ", ".join(f"{statuses.count(s)} {s.replace('_', ' ')}" for s in order)
    took = f" in {sweep.clock(wall)}" if wall is not None else ""
    return f"sweep: {len(statuses)} results{took}: {counts}"
