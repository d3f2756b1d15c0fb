"""Comparison with a baseline (a stored set of results, e.g. from the same hardware): every
configuration measured in both is judged by the one rule of bench.report.verdict — slower when
its median is beyond the threshold *and* its runs do not overlap the baseline's; less accurate
likewise — or flagged when it no longer runs. DeepLearningFrameworks' "verify performance after
installation". With fewer than two runs on a side the verdict says so and flags nothing: one
run each cannot tell a regression from a busy machine.

Configurations are matched exactly (same composed config, same hardware), so a baseline from
other hardware matches nothing, and says so, rather than flagging everything. Where one is
flagged, the distributions whose versions differ between the two sides' environments (as the
results record them) are named: the first suspects of a change.
"""

from dataclasses import dataclass
from typing import Optional

from ..run import locks
from . import verdict
from .collection import Configuration, Grid
from .metrics import Metric
from .tables import cell, markdown_table, title

NOT_FLAGGED = ("unsupported", "not_installed")  # a row that cannot run here is no regression


@dataclass
class Finding:
    row: str
    task: str
    column: str
    baseline: Optional[Configuration]
    current: Optional[Configuration]
    verdict: str
    flagged: bool
    speed: Optional[verdict.Verdict] = None  # current against baseline, by the metric
    accuracy_change: Optional[float] = None  # current - baseline (medians)
    # flagged only: the distributions that differ, `numpy 1.23.5 → 1.26.4`; None: a side's
    # results record no environment
    packages: Optional[list] = None

    @property
    def where(self):
        """`Tesla P100-PCIE-16GB fp32`: the hardware and precision (a table's column label
        leaves out what every column shares)."""
        run = (self.current or self.baseline).first
        return f"{run.hardware} {run.precision}"


def distributions(configuration: Configuration):
    """{distribution: its versions over a configuration's runs, `1.0/1.1` where they differ};
    None when a run records no environment (a result from before schema 2)."""
    found = {}
    for run in configuration.runs:
        recorded = (run.result.get("environment") or {}).get("distributions")
        if recorded is None:
            return None
        for name, version in recorded.items():
            found.setdefault(locks.canonical(name), set()).add(version)
    return {name: "/".join(sorted(versions)) for name, versions in found.items()}


def package_changes(base: Configuration, now: Configuration):
    """[`numpy 1.23.5 → 1.26.4`, `+rich 13.0`, `-six 1.16`]: what differs from the baseline's
    environment to the current one's (several versions on a side: `1.0/1.1`); None where a
    side records none."""
    old, new = distributions(base), distributions(now)
    if old is None or new is None:
        return None
    return [
        f"{name} {before} → {after}"
        if before and after
        else f"+{name} {after}"
        if after
        else f"-{name} {before}"
        for name, before, after in locks.version_changes(old, new)
    ]


def packages_text(finding):
    """How a flagged finding's packages read: the changes, or why there are none to name."""
    if finding.packages is None:
        return "packages unknown (a side's results record no environment)"
    return "; ".join(finding.packages) if finding.packages else "the same packages"


def busy_text(side, configuration: Configuration) -> str:
    """`the host was busy during the current runs (other processes took 48 % of the CPUs'
    time ...; 3 of 3 runs disturbed)`."""
    runs = configuration.disturbed
    reasons = "; ".join(runs[0].host_reasons) or "flagged disturbed"
    return (
        f"the host was busy during {side} runs ({reasons}; {len(runs)} of "
        f"{len(configuration.ok)} runs disturbed)"
    )


def not_measured(metric: Metric, configuration: Configuration) -> str:
    """Why runs that are ok have no value of `metric`, in a few words."""
    if metric.name == "time_to_target":
        return "target not reached" if configuration.first.kind == "train" else "no target"
    if metric.name == "utilisation":
        return "no host peak"
    return f"no {metric.title}"


def judge(metric: Metric, base, now, slower, accuracy_drop, min_runs):
    """(verdict text, flagged, speed verdict, accuracy change) for one matched configuration."""
    if base.status != "ok":
        return (f"{now.status} (baseline {base.status})", False, None, None)
    if now.status != "ok":
        return (now.status, now.status not in NOT_FLAGGED, None, None)
    busy = [
        busy_text(side, c)
        for side, c in (("the current", now), ("the baseline's", base))
        if c.disturbed and len(c.values(metric)) < min_runs
    ]
    if busy:  # the host, not the configuration: never "slower"
        return (f"not judged: {'; '.join(busy)}", False, None, None)
    missing = [side for side, c in (("now", now), ("baseline", base)) if not c.values(metric)]
    if missing:  # the rest of the report stands; this configuration is said, not compared
        return (
            f"{not_measured(metric, now)} ({' and '.join(missing)}), not compared",
            False,
            None,
            None,
        )
    speed = verdict.judge(metric, now.values(metric), base.values(metric), slower, min_runs)
    new_acc = [r.accuracy for r in now.ok if r.accuracy is not None]
    old_acc = [r.accuracy for r in base.ok if r.accuracy is not None]
    delta = now.accuracy - base.accuracy if new_acc and old_acc else None
    problems = []
    if speed.kind == verdict.SLOWER:
        problems.append("slower")
    if (
        delta is not None
        and delta < -accuracy_drop
        and min(len(new_acc), len(old_acc)) >= min_runs
        and max(new_acc) < min(old_acc)
    ):
        problems.append("less accurate")
    if problems:
        return ", ".join(problems), True, speed, delta
    if speed.kind == verdict.TOO_FEW:
        return speed.text(min_runs), False, speed, delta
    return ("faster" if speed.kind == verdict.FASTER else "ok"), False, speed, delta


def compare(current: Grid, baseline: Grid, slower=0.10, accuracy_drop=0.02, min_runs=2):
    """One Finding per configuration in either set; those in both are judged."""
    if slower < 0 or accuracy_drop < 0 or min_runs < 1:
        raise ValueError(
            "baseline thresholds must be >= 0 (a fraction of the time, and "
            "accuracy as a fraction: 0.02 = 2 points) and --min-runs >= 1"
        )
    base = {c.key: c for c in baseline.configurations}
    findings = []
    for now in current.configurations:
        old = base.pop(now.key, None)
        if old is None:
            findings.append(Finding(now.row, now.task, now.column, None, now, "no baseline", False))
            continue
        text, flagged, speed, delta = judge(
            current.metric, old, now, slower, accuracy_drop, min_runs
        )
        findings.append(
            Finding(
                now.row,
                now.task,
                now.column,
                old,
                now,
                text,
                flagged,
                speed,
                delta,
                package_changes(old, now) if flagged else None,
            )
        )
    for old in base.values():  # in the baseline only
        findings.append(Finding(old.row, old.task, old.column, old, None, "not run", False))
    return findings


HEADER = [
    "framework",
    "task",
    "hardware, precision",
    "baseline",
    "now",
    "speed now / baseline",
    "accuracy change (points)",
    "verdict",
]


def _flagged_text(f):
    return f"**{f.verdict}**"


def rows(findings, metric: Metric, flagged_text=_flagged_text):
    """The table's rows, the flagged first; `flagged_text(finding)` shows a flagged verdict
    (Markdown: in bold)."""
    shown = []
    for f in sorted(findings, key=lambda f: (not f.flagged, f.row.lower(), f.task, f.column)):
        speed = f.speed
        change = "" if speed is None else (f"{speed.ratio:.2f}× ({speed.low:.2f}–{speed.high:.2f})")
        shown.append(
            [
                f.row,
                title(f.task),
                f.where,
                cell(f.baseline, metric),
                cell(f.current, metric),
                change,
                "" if f.accuracy_change is None else f"{100 * f.accuracy_change:+.1f}",
                flagged_text(f) if f.flagged else f.verdict,
            ]
        )
    return shown


def markdown(findings, metric: Metric, slower, accuracy_drop, min_runs=2) -> str:
    matched = [f for f in findings if f.baseline is not None and f.current is not None]
    flagged = [f for f in findings if f.flagged]
    too_few = [f for f in matched if f.speed is not None and f.speed.kind == verdict.TOO_FEW]
    head = (
        f"Against the baseline, by {metric.title}: {len(flagged)} of {len(matched)} "
        f"configurations found in both flagged — slower (median more than {slower:.0%} "
        f"slower and no run as fast as the baseline's slowest), less accurate (more than "
        f"{100 * accuracy_drop:.1f} points, likewise), or no longer ok."
    )
    if too_few:
        head += (
            f" {len(too_few)} need ≥ {min_runs} runs each to be judged (repeat them: "
            f"`-m seed=0,1`), and are not flagged."
        )
    if not matched:
        head += (
            " No configuration matches: the baseline was measured on other hardware or "
            "with other settings."
        )
    text = head + "\n\n" + markdown_table(HEADER, rows(findings, metric)) + "\n"
    if flagged:
        text += "\nPackages that differ between the baseline's environment and the current one:\n\n"
        text += "".join(
            f"- {f.row}, {title(f.task)} ({f.where}): {packages_text(f)}\n"
            for f in sorted(flagged, key=lambda f: (f.row.lower(), f.task, f.column))
        )
    return text
