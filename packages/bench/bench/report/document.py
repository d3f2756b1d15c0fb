"""report.json: the report as data, for scripts and dashboards. Its layout is
report.schema.json beside this module (a JSON Schema; docs/reports.md describes each field),
versioned by `schema_version`."""

import datetime

from . import quality, tables
from .collection import steady_state

# 2: columns name only what tells them apart (the rest is `uniform`); every × with its interval
# and each cell's quality status; warnings, the time-to-target cells, the settings compared
# within a framework, the runs left out
SCHEMA_VERSION = 2


def _summary(c, metric):
    s = c.summary(metric) if c.status == "ok" else None
    if s is None:
        return {}
    return {
        "median": s.median,
        "low": s.low,
        "high": s.high,
        "n": s.n,
        "spread": "iqr" if s.iqr else "min-max",
    }


def _quality(c):
    q = quality.of(c)
    return {
        "status": q.status,
        "accuracy": q.accuracy,
        "target": q.target,
        "chance": q.chance,
        "runs": q.runs,
        "below_target": q.below,
        "reason": q.reason(),
    }


def _ratio(comparison):
    if comparison is None:
        return None
    r = comparison.ratio
    return {"ratio": r.ratio, "low": r.low, "high": r.high, "verdict": comparison.verdict}


def cells_of(grid):
    """One record per cell of the grid's table."""
    metric, cells = grid.metric, []
    for (row, task, column), c in sorted(grid.cells.items()):
        found = tables.relative_comparison(grid, task, column, row)
        text = tables.relative(grid, task, column, row)
        cells.append(
            {
                "framework": c.first.framework,
                "row": row,
                "task": task,
                "column": column,
                "hardware": c.first.hardware,
                "precision": c.first.precision,
                "preset": c.first.preset,
                "status": c.status,
                **_summary(c, metric),
                "relative": _float(text.split()[0]) if text else None,
                "relative_low": found.ratio.low if found else None,
                "relative_high": found.ratio.high if found else None,
                "quality": _quality(c) if c.status == "ok" else None,
                "steady_state": all(steady_state(r) for r in c.ok),
                "accuracy": c.accuracy,
                "runs": [str(r.path) for r in c.runs],
            }
        )
    return cells


def build(
    grid,
    sources,
    findings=None,
    host_pairs=None,
    history=None,
    warnings=(),
    to_target=None,
    settings=(),
    left_out=None,
):
    """The document: the table's cells, the comparisons, and what else the report holds."""
    metric = grid.metric
    cells = cells_of(grid)
    document = {
        "schema_version": SCHEMA_VERSION,
        "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "sources": [str(s) for s in sources],
        "metric": {
            "name": metric.name,
            "title": metric.title,
            "higher_is_better": metric.higher_is_better,
            "units": dict(metric.units),
        },
        "uniform": dict(grid.uniform),
        "cells": cells,
        "comparisons": [
            {"task": t, "column": c, "sentence": s} for t, c, s in tables.comparisons(grid)
        ],
        "warnings": list(warnings),
        "left_out": dict(left_out or {}),
    }
    if to_target is not None:
        document["time_to_target"] = {
            "cells": cells_of(to_target),
            "comparisons": [
                {"task": t, "column": c, "sentence": s} for t, c, s in tables.comparisons(to_target)
            ],
        }
    if settings:
        document["settings"] = [
            {
                "framework": a.configuration.first.framework,
                "row": a.configuration.row,
                "task": a.configuration.task,
                "column": a.configuration.column,
                "axis": a.axis,
                "setting": a.setting,
                "against": a.baseline_setting,
                "speed": _ratio(a.speed),
                "time_to_target": _ratio(a.to_target),
                "verdict": a.verdict(),
            }
            for a in settings
        ]
    if findings is not None:
        document["baseline"] = [_finding(f) for f in findings]
    if host_pairs:
        document["hosts"] = [
            {
                "task": a.task,
                "framework": a.first.framework,
                "faster": [a.first.hostname, a.first.hardware],
                "slower": [b.first.hostname, b.first.hardware],
                **_verdict(v),
            }
            for a, b, v in host_pairs
        ]
    if history is not None:
        document["history"] = [
            {
                "framework": s.row,
                "task": s.task,
                "column": s.column,
                "points": [
                    {
                        "commit": p.commit,
                        "date": p.date,
                        "median": p.summary.median if p.summary else None,
                        "low": p.summary.low if p.summary else None,
                        "high": p.summary.high if p.summary else None,
                        "n": p.summary.n if p.summary else 0,
                        **({"change": p.verdict.kind} if p.verdict else {}),
                        **({"not_judged": p.busy} if p.busy else {}),
                    }
                    for p in s.points
                ],
            }
            for s in history
        ]
    return document


def _float(text):
    try:
        return float(text) if text else None
    except ValueError:  # below target, at chance: not ranked
        return None


def _verdict(v):
    return {"verdict": v.kind, "ratio": v.ratio, "low": v.low, "high": v.high}


def _finding(f):
    found = {
        "row": f.row,
        "task": f.task,
        "column": f.column,
        "verdict": f.verdict,
        "flagged": f.flagged,
        "accuracy_change": f.accuracy_change,
    }
    if f.speed is not None:
        found["speed"] = _verdict(f.speed)
    if f.flagged and f.baseline is not None and f.current is not None:
        found["packages_changed"] = f.packages  # None: a side records no environment
    return found
