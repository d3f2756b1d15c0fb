"""report.json: the report as data, for scripts and dashboards. Its layout is
report.schema.json beside this module (a JSON Schema; docs/reports.md describes each field),
versioned by `schema_version`."""
import datetime

from . import tables

SCHEMA_VERSION = 1


def _summary(c, metric):
    s = c.summary(metric) if c.status == "ok" else None
    if s is None:
        return {}
    return {"median": s.median, "low": s.low, "high": s.high, "n": s.n,
            "spread": "iqr" if s.iqr else "min-max"}


def build(grid, sources, findings=None, host_pairs=None, history=None):
    """The document: the table's cells, the comparisons, and what else the report holds."""
    metric = grid.metric
    cells = []
    for (row, task, column), c in sorted(grid.cells.items()):
        cells.append({"framework": c.first.framework, "row": row, "task": task,
                      "column": column, "hardware": c.first.hardware,
                      "precision": c.first.precision, "preset": c.first.preset,
                      "status": c.status, **_summary(c, metric),
                      "relative": _float(tables.relative(grid, task, column, row)),
                      "accuracy": c.accuracy, "runs": [str(r.path) for r in c.runs]})
    document = {
        "schema_version": SCHEMA_VERSION,
        "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "sources": [str(s) for s in sources],
        "metric": {"name": metric.name, "title": metric.title,
                   "higher_is_better": metric.higher_is_better, "units": dict(metric.units)},
        "uniform": dict(grid.uniform),
        "cells": cells,
        "comparisons": [{"task": t, "column": c, "sentence": s}
                        for t, c, s in tables.comparisons(grid)],
    }
    if findings is not None:
        document["baseline"] = [_finding(f) for f in findings]
    if host_pairs:
        document["hosts"] = [{"task": a.task, "framework": a.first.framework,
                              "faster": [a.first.hostname, a.first.hardware],
                              "slower": [b.first.hostname, b.first.hardware],
                              **_verdict(v)} for a, b, v in host_pairs]
    if history is not None:
        document["history"] = [{"framework": s.row, "task": s.task, "column": s.column,
                                "points": [{"commit": p.commit, "date": p.date,
                                            "median": p.summary.median, "low": p.summary.low,
                                            "high": p.summary.high, "n": p.summary.n,
                                            **({"change": p.verdict.kind} if p.verdict
                                               else {})}
                                           for p in s.points]} for s in history]
    return document


def _float(text):
    return float(text) if text else None


def _verdict(v):
    return {"verdict": v.kind, "ratio": v.ratio, "low": v.low, "high": v.high}


def _finding(f):
    found = {"row": f.row, "task": f.task, "column": f.column, "verdict": f.verdict,
             "flagged": f.flagged, "accuracy_change": f.accuracy_change}
    if f.speed is not None:
        found["speed"] = _verdict(f.speed)
    return found
