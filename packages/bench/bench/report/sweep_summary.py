"""The end of a sweep: the table of every result in its directory that ran (its warnings, its
sentences), printed and written (summary.md, results.csv with every result). Runs refused
before starting (unsupported, not_installed) are counted in one line, not tabled, as in a
report. The command line hands `summarise` to the run layer, which calls it when a sweep ends,
still holding the sweep directory's lock (bench.run.sweep.SweepLock)."""

from pathlib import Path

from bench_shared import contract

from .. import files
from ..run import sweep
from . import axes, collection, costs, results_csv, scaling, tables, warn


def summarise(sweep_dir: Path, wall=None):
    """Print and write (summary.md, results.csv) the table of every result in the sweep;
    their statuses. wall: the sweep's seconds so far, for the last line."""
    found = collection.read([sweep_dir], command="sweep")[0]  # the sweep's own state, all of it
    statuses = [run.status for run in found]
    if not found:
        print(f"sweep {sweep_dir}: no results", flush=True)
        return statuses
    shown, left_out = collection.select(found, collection.wanted_statuses(interrupted=True))
    text = ""
    if shown:
        table = collection.Grid(shown, left_out=dict(left_out))
        text = tables.markdown(table)
        found_warnings = warn.markdown(warn.warnings(table))
        if found_warnings:
            text += "\n" + found_warnings
        sentences = tables.comparisons_markdown(table)
        if sentences:
            text += "\n" + sentences
        settings = axes.pairs(table)  # `-m precision=fp32,bf16`: bf16 against fp32
        if settings:
            text += "\n" + axes.markdown(settings, table.metric)
        scaled = scaling.pairs(table)  # `-m devices=1,2`: the speed-up beside the table
        if scaled:
            text += "\n" + scaling.markdown(scaled)
        spent = costs.markdown(table)  # where the sweep's runs spent their time
        if spent:
            text += "\n" + spent
    if left_out:  # refused before starting
        counts = ", ".join(f"{n} {status}" for status, n in sorted(left_out.items()))
        rows = ", ".join(sorted({r.display_name for r in found if r.status in left_out}))
        text += ("\n" if text else "") + (
            f"Not in the table, refused before starting: {counts} ({rows}); `python -m bench "
            f"report {sweep_dir} --status all` shows them.\n"
        )
    files.write_text(sweep_dir / "summary.md", text)
    efficiency = scaling.efficiency_of(collection.Grid(shown)) if shown else {}
    results_csv.write_csv(found, sweep_dir / "results.csv", efficiency)
    print(
        f"\n{text}\nsummary: {sweep_dir / 'summary.md'} (charts and baselines: "
        f"python -m bench report {sweep_dir})",
        flush=True,
    )
    print(counts_line(statuses, wall), flush=True)
    return statuses


def counts_line(statuses, wall=None):
    """`sweep: 4 results in 1:23: 3 ok, 1 failed` (the statuses in contract order, each
    spelled as in result.json)."""
    order = [s for s in contract.STATUSES if s in statuses]
    counts = ", ".join(f"{statuses.count(s)} {s}" for s in order)
    took = f" in {sweep.clock(wall)}" if wall is not None else ""
    return f"sweep: {len(statuses)} results{took}: {counts}"
