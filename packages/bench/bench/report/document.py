"""report.json: the report as data, for scripts and dashboards: the main table's cells, then
each section's data under its key (bench.report.sections). Its layout is
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


def build(grid, sources, parts=(), context=None, warnings=(), left_out=None):
    """The document: the table's cells, what else the report holds, and each section's data
    under its key (`parts`: bench.report.sections' Parts, found in `context`)."""
    metric = grid.metric
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
        "cells": cells_of(grid),
        "warnings": list(warnings),
        "left_out": dict(left_out or {}),
    }
    for part in parts:
        document[part.section.key] = part.section.data(part.found, context)
    return document


def _float(text):
    try:
        return float(text) if text else None
    except ValueError:  # below target, at chance: not ranked
        return None
