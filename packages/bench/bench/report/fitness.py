"""Fit to rank: the written rules a configuration's results must meet before a table may rank
them, in the way MLPerf's submission checker marks a bundle valid or invalid. Checked per
configuration (the repeats of one composed config on one kind of hardware) by `python -m
bench check` (bench.tools.check); docs/trust.md lists the same rules (a test holds them equal).
The rules on the bundle as a whole (its A/A control, the host's trend, two bundles' agreement)
are bench.report.bundle's.

A rule says why a configuration breaks it in one line, or None. Thresholds are the command's
options, with these defaults: six undisturbed runs (five pairs cannot reach 95 % in an exact
signed-rank test: bench.paired), and the median's 95 % interval at most 10 % wide.
"""

from dataclasses import dataclass
from typing import Callable, Optional

from .. import paired
from .collection import Configuration

MIN_RUNS = paired.MIN_ROUNDS  # undisturbed runs a configuration needs
MAX_INTERVAL = 0.10  # how wide the median's 95 % interval may be: high / low - 1
# the environment's relation to its lock that a rankable run may have (bench.run.locks)
LOCK_STATUSES = ("locked", "override")


@dataclass(frozen=True)
class Thresholds:
    min_runs: int = MIN_RUNS
    max_interval: float = MAX_INTERVAL


@dataclass(frozen=True)
class Rule:
    name: str
    text: str  # the rule, as the docs write it
    broken: Callable  # (configuration, metric, thresholds) -> why it is broken, or None


def _each(configuration, why, ok_only=True):
    """The first run's reason (naming the run where only some break it), or None; a rule on
    what a run measured asks its ok runs only (the status rule speaks for the others)."""
    runs = [r for r in configuration.runs if r.status == "ok" or not ok_only]
    reasons = [(run, why(run)) for run in runs]
    broken = [(run, reason) for run, reason in reasons if reason]
    if not broken:
        return None
    run, reason = broken[0]
    some = f" ({len(broken)} of {len(reasons)} runs; e.g. {run.path})" if len(reasons) > 1 else ""
    return reason + some


def _status(c, metric, limits):
    return _each(
        c,
        lambda run: (
            None
            if run.status == "ok"
            else f"status {run.status}"
            + (f": {run.result.get('error', '')[:120]}" if run.result.get("error") else "")
        ),
        ok_only=False,
    )


def _commit(c, metric, limits):
    def why(run):
        commit = (run.result.get("host") or {}).get("git_commit")
        if not commit:
            return "no code commit recorded (not run from a git checkout)"
        if commit.endswith("-dirty"):
            return f"run from a tree with uncommitted changes ({commit})"
        return None

    return _each(c, why)


def _lock(c, metric, limits):
    def why(run):
        environment = run.result.get("environment")
        if not environment:
            return "no environment recorded (a result from before schema 2)"
        status = environment.get("status")
        if status in LOCK_STATUSES and not environment.get("distributions"):
            return (
                f"the environment is called {status} but records no distributions: the "
                f"lock rule needs the packages"
            )
        if status in LOCK_STATUSES:
            return None
        if environment.get("lock_problem"):
            return environment["lock_problem"]
        if status == "drifted":
            changed = ", ".join(d["name"] for d in environment.get("drift", [])[:5])
            return f"the environment drifted from {environment.get('lock')}: {changed}"
        return "the environment was not built from a lock"

    return _each(c, why)


def _steady(c, metric, limits):
    def why(run):
        if run.kind != "train":
            return None
        if not (run.result.get("stats") or {}).get("steady_state_measured"):
            return "no steady state measured (one epoch: its time includes the warm-up)"
        return None

    return _each(c, why)


def _target(c, metric, limits):
    def why(run):
        if run.kind != "train":
            return None
        stats = run.result.get("stats") or {}
        target = stats.get("quality_target")
        if target is None:
            return "no quality target declared for its task and data"
        if not stats.get("target_reached"):
            return f"accuracy {run.accuracy:.3f} below the quality target {target:g}"
        return None

    return _each(c, why)


def _undisturbed(c, metric, limits):
    # every run the host did not disturb counts (a failed one is the status rule's)
    disturbed = c.disturbed
    n = len(c.runs) - len(disturbed)
    if n >= limits.min_runs:
        return None
    why = f"{n} undisturbed run(s); at least {limits.min_runs} needed"
    if disturbed:
        reasons = disturbed[0].host_reasons
        why += (
            f" ({len(disturbed)} disturbed by the host, left out: e.g. "
            f"{'; '.join(reasons) or 'flagged'})"
        )
    return why


def interval_broken(c, metric, limits=None):
    """Why the configuration's median is too uncertain to rank, or None: its 95 % interval
    (order statistics: bench.paired.median_interval) wider than max_interval. A rule with
    nothing to judge refuses; with too few runs for an interval the undisturbed rule speaks."""
    limits = limits or Thresholds()
    values = c.values(metric)
    if not values and c.ok:
        return nothing_to_judge(c, metric)
    interval = paired.median_interval(values)
    if interval is None or interval[0] <= 0:
        return None
    low, high = interval
    width = high / low - 1
    if width > limits.max_interval:
        return (
            f"its median {metric.title}'s 95 % interval is {width:.0%} wide ({low:.4g} to "
            f"{high:.4g}, {len(values)} runs; at most {limits.max_interval:.0%}): more rounds "
            f"(rounds.adaptive) or a quieter host"
        )
    return None


def nothing_to_judge(c, metric):
    """Why a rule on `metric` has nothing to judge in a configuration whose runs are ok: no
    run records the figure (a rule with nothing to measure refuses, never passes)."""
    kind = c.first.kind
    if metric.name == "utilisation":
        missing = "host utilisation (no host peak was measured: `python -m bench peak`)"
    elif metric.name == "time_to_target" and kind != "train":
        missing = "time to the quality target (an inference task has none)"
    elif metric.name == "time_to_target":
        missing = "time to the quality target (no run reached it)"
    else:
        missing = metric.title
    return f"no run records its {missing}: nothing to judge by --metric {metric.name}"


RULES = (
    Rule(
        "schema",
        "every result file is strict JSON, follows result.schema.json, and every figure in it "
        "follows from the measurements beside it",
        lambda c, m, t: None,
    ),
    Rule("status", "every run's status is ok", _status),
    Rule("commit", "the code commit is recorded and the tree was clean", _commit),
    Rule(
        "lock",
        "the environment matched the lock it was built from, or declared its override",
        _lock,
    ),
    Rule("steady", "a training run measured a steady state (two epochs or more)", _steady),
    Rule("target", "a training run reached its task's quality target", _target),
    Rule(
        "undisturbed",
        "the configuration has enough runs the host did not disturb (`--min-runs`, default "
        "6: five pairs cannot reach 95 % in an exact signed-rank test)",
        _undisturbed,
    ),
    Rule(
        "interval",
        "its median is certain enough to rank: the 95 % interval of the median of its "
        "undisturbed runs at most 10 % wide (`--max-interval`)",
        interval_broken,
    ),
)


@dataclass(frozen=True)
class Fitness:
    configuration: Configuration
    broken: tuple  # ((rule name, why), ...)

    @property
    def valid(self):
        return not self.broken

    def text(self):
        return (
            "VALID"
            if self.valid
            else "INVALID: " + "; ".join(f"{name}: {why}" for name, why in self.broken)
        )


def judge(configuration: Configuration, metric, thresholds: Optional[Thresholds] = None):
    """The configuration's Fitness: every rule it breaks, with why."""
    limits = thresholds or Thresholds()
    broken = tuple(
        (rule.name, why) for rule in RULES if (why := rule.broken(configuration, metric, limits))
    )
    return Fitness(configuration, broken)
