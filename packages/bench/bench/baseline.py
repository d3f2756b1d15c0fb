"""Comparison with a baseline (a stored set of results, e.g. from the same hardware): every
configuration measured in both is flagged when it is slower, or less accurate, beyond a
threshold, or no longer runs — DeepLearningFrameworks' "verify performance after installation".

Configurations are matched exactly (same composed config, same hardware), so a baseline from
other hardware matches nothing, and says so, rather than flagging everything.
"""
from dataclasses import dataclass
from typing import Optional

from .runs import Configuration, Grid
from .tables import cell, markdown_table, title


@dataclass
class Finding:
    row: str
    task: str
    column: str
    baseline: Optional[Configuration]
    current: Optional[Configuration]
    verdict: str
    flagged: bool
    time_change: Optional[float] = None  # current / baseline - 1
    accuracy_change: Optional[float] = None  # current - baseline


def judge(base, now, slower, accuracy_drop):
    """(verdict, flagged, time change, accuracy change) for one matched configuration."""
    if base.status != "ok":
        return (f"{now.status} (baseline {base.status})", False, None, None)
    if now.status != "ok":
        return (now.status, True, None, None)
    change = now.seconds / base.seconds - 1 if base.seconds else None
    delta = (now.accuracy - base.accuracy
             if now.accuracy is not None and base.accuracy is not None else None)
    problems = []
    if change is not None and change > slower:
        problems.append("slower")
    if delta is not None and delta < -accuracy_drop:
        problems.append("less accurate")
    return (", ".join(problems) or "ok", bool(problems), change, delta)


def compare(current: Grid, baseline: Grid, slower=0.10, accuracy_drop=0.02):
    """One Finding per configuration in either set; those in both are judged."""
    if slower < 0 or accuracy_drop < 0:
        raise ValueError("baseline thresholds must be >= 0 (a fraction of the time, and "
                         "accuracy as a fraction: 0.02 = 2 points)")
    base = {c.key: c for c in baseline.configurations}
    findings = []
    for now in current.configurations:
        old = base.pop(now.key, None)
        if old is None:
            findings.append(Finding(now.row, now.task, now.column, None, now, "no baseline",
                                    False))
            continue
        verdict, flagged, change, delta = judge(old, now, slower, accuracy_drop)
        findings.append(Finding(now.row, now.task, now.column, old, now, verdict, flagged,
                                change, delta))
    for old in base.values():  # in the baseline only
        findings.append(Finding(old.row, old.task, old.column, old, None, "not run", False))
    return findings


def markdown(findings, slower, accuracy_drop) -> str:
    matched = [f for f in findings if f.baseline is not None and f.current is not None]
    flagged = [f for f in findings if f.flagged]
    head = (f"Against the baseline: {len(flagged)} of {len(matched)} configurations found in "
            f"both flagged (slower by more than {slower:.0%}, accuracy down by more than "
            f"{100 * accuracy_drop:.1f} points, or no longer ok).")
    if not matched:
        head += (" No configuration matches: the baseline was measured on other hardware or "
                 "with other settings.")
    rows = []
    for f in sorted(findings, key=lambda f: (not f.flagged, f.row.lower(), f.task, f.column)):
        rows.append([f.row, title(f.task), f.column, cell(f.baseline), cell(f.current),
                     "" if f.time_change is None else f"{f.time_change:+.1%}",
                     "" if f.accuracy_change is None else f"{100 * f.accuracy_change:+.1f}",
                     f"**{f.verdict}**" if f.flagged else f.verdict])
    header = ["framework", "task", "hardware", "baseline", "now", "time change",
              "accuracy change (points)", "verdict"]
    return head + "\n\n" + markdown_table(header, rows) + "\n"
