"""Host against host: the same configuration (every setting but the machine) measured on two
hosts — two host names, or one host with another CPU set (the CPUs a run may use are part of
its hardware) — compared by the one rule of bench.report.verdict: "node1 (Intel Xeon ..., 2
CPUs) ran 1.52× (1.45–1.60) faster than node2 (...)"."""

import itertools

from . import verdict
from .collection import Grid, group
from .tables import markdown_table, title


def pairs(grid: Grid, min_change=0.05, min_runs=2):
    """[(configuration A, configuration B, Verdict of A against B)] for every configuration
    run on two hosts or more (A the faster by the median)."""
    by_identity = {}
    for c in group(grid.runs, by_host=True):
        if c.ok:
            by_identity.setdefault(c.first.identity, []).append(c)
    found = []
    for configurations in by_identity.values():
        if len({_machine(c) for c in configurations}) < 2:
            continue
        for a, b in itertools.combinations(configurations, 2):
            if _machine(a) == _machine(b):
                continue
            if not a.values(grid.metric) or not b.values(grid.metric):
                continue  # no figure on a side (a target not reached, no host peak)
            judged = verdict.judge(
                grid.metric, a.values(grid.metric), b.values(grid.metric), min_change, min_runs
            )
            if judged.ratio < 1:
                a, b = b, a
                judged = verdict.judge(
                    grid.metric, a.values(grid.metric), b.values(grid.metric), min_change, min_runs
                )
            found.append((a, b, judged))
    return found


def _machine(c):
    return c.first.hostname, c.first.hardware


def _host(c):
    return f"{c.first.hostname} ({c.first.hardware})"


HEADER = ["framework", "task", "precision", "faster host", "other host", "speed ratio", "verdict"]


def rows(found, min_runs=2):
    return [
        [
            a.first.display_name,
            title(a.task),
            a.first.precision,
            _host(a),
            _host(b),
            f"{v.ratio:.2f}× ({v.low:.2f}–{v.high:.2f})",
            v.text(min_runs),
        ]
        for a, b, v in found
    ]


def markdown(found, metric, min_runs=2) -> str:
    if not found:
        return ""
    return (
        f"Host against host, by {metric.title} (the same configuration on two hosts; "
        f"a change is real when the medians differ beyond the threshold and the runs do "
        f"not overlap):\n\n" + markdown_table(HEADER, rows(found, min_runs)) + "\n"
    )
