"""Where the runs' wall time went (their results' `phases`, bench.run.phases): the share spent
in timed windows, and per framework its runs' median wall time and largest fixed costs, e.g.
"TensorFlow: 4.1 s of framework_import a run, 38 % of its runs' wall time". Results from
before phases were recorded are left out, and the section says how many it read."""

import statistics

from .collection import Grid
from .tables import markdown_table

# what a run is for; the rest is the price of measuring it
MEASURING = ("timed",)
SHOWN = 2  # fixed costs named per framework


def _wall(phases):
    return sum(v for v in phases.values() if isinstance(v, (int, float)))


def rows(grid: Grid):
    """[(framework row, runs, median wall s, timed share, [(phase, median s, share)])], the
    frameworks in the grid's order, and (timed seconds, wall seconds) over every run."""
    by_row, timed_total, wall_total = {}, 0.0, 0.0
    for c in grid.configurations:
        for run in c.runs:
            phases = run.result.get("phases") or {}
            wall = _wall(phases)
            if wall <= 0:
                continue
            by_row.setdefault(c.row.split(" [")[0], []).append(phases)
            timed_total += sum(phases.get(p, 0.0) for p in MEASURING)
            wall_total += wall
    found = []
    for row in sorted(by_row, key=str.lower):
        runs = by_row[row]
        walls = [_wall(p) for p in runs]
        timed = sum(sum(p.get(m, 0.0) for m in MEASURING) for p in runs) / sum(walls)
        names = {k for p in runs for k in p if k not in MEASURING}
        costs = sorted(
            ((name, statistics.median(p.get(name, 0.0) for p in runs)) for name in names),
            key=lambda nc: nc[1],
            reverse=True,
        )[:SHOWN]
        median_wall = statistics.median(walls)
        found.append(
            (row, len(runs), median_wall, timed, [(n, s, s / median_wall) for n, s in costs])
        )
    return found, (timed_total, wall_total)


def markdown(grid: Grid) -> str:
    """The section, or "" where no result records its phases."""
    found, (timed, wall) = rows(grid)
    if not found:
        return ""
    lines = [
        f"Where the runs' time went: {timed / wall:.0%} of their wall time in timed windows "
        f"({timed:.0f} s of {wall:.0f} s, {sum(r[1] for r in found)} runs); each framework's "
        f"median run and its largest fixed costs (bench.run.phases).",
        "",
    ]
    return "\n".join(lines) + "\n" + markdown_table(HEADER, table_rows(found)) + "\n"


HEADER = ["framework", "runs", "wall a run", "timed", "largest fixed costs a run"]


def table_rows(found):
    """The table's rows from `rows`' first value."""
    return [
        [
            row,
            str(n),
            f"{median_wall:.2f} s",
            f"{share:.0%}",
            "; ".join(f"{name} {seconds:.2f} s ({part:.0%})" for name, seconds, part in costs),
        ]
        for row, n, median_wall, share, costs in found
    ]
