"""The report's agreement section: do the frameworks agree on accuracy beyond the seed noise?

Read from the runs that `python -m bench -m comparison=agreement` leaves (every framework x
cnn, rnn x seeds, init=neutral), but computed for any training configuration run with two or
more seeds, in a group (task, column, init) of two frameworks or more: one framework alone
agrees with nothing. Per framework and task (one report column, one init mode): the final test
accuracy and the final training loss (the last epoch's mean), their mean and range (min-max) over
seeds. Per task: the spread across frameworks (max - min of the frameworks' means) against
the seed noise (the median over frameworks of their own min-max range over seeds).

The flag, precisely: a framework is *outside* on a metric when its mean over seeds lies
outside the range (min to max) of every single seed's value of all the *other* frameworks in
the same group, pooled; left out (not flagged) when the others have fewer than two values.
Its own seeds are left out of the pool because a mean always lies within a range that holds
the values it is the mean of.
"""

import csv
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .collection import Grid, uniform_text
from .tables import heading as column_heading
from .tables import markdown_table

METRICS = ("accuracy", "loss")


def final_loss(run):
    losses = run.result.get("losses") or []
    return float(losses[-1]) if losses else None


def init_mode(run):
    return (run.result.get("config", {}).get("init") or {}).get("name", "native")


@dataclass
class Entry:
    """One framework's seeds of one task: one row of the section."""

    row: str
    task: str
    column: str
    init: str
    runs: list
    values: dict = field(init=False)  # metric -> [value per ok seed]
    seeds: list = field(init=False)  # the seeds of the ok runs
    not_ok: int = field(init=False)  # runs failed, invalid or without an accuracy
    outside: dict = field(default_factory=dict)  # metric -> True/False, absent: not judged

    def __post_init__(self):
        ok = [r for r in self.runs if r.status == "ok" and r.accuracy is not None]
        self.values = {
            "accuracy": [r.accuracy for r in ok],
            "loss": [v for v in map(final_loss, ok) if v is not None],
        }
        self.seeds = sorted({r.result["config"].get("seed") for r in ok}, key=str)
        self.not_ok = len(self.runs) - len(ok)

    def mean(self, metric) -> Optional[float]:
        values = self.values[metric]
        return statistics.fmean(values) if values else None

    def range(self, metric):
        values = self.values[metric]
        return (min(values), max(values)) if values else (None, None)

    def spread(self, metric) -> Optional[float]:
        low, high = self.range(metric)
        return None if low is None else high - low


@dataclass
class Group:
    """Every framework's entry for one task, report column and init mode."""

    task: str
    column: str
    init: str
    entries: list

    def across(self, metric) -> Optional[float]:
        """max - min of the frameworks' means."""
        means = [m for m in (e.mean(metric) for e in self.entries) if m is not None]
        return max(means) - min(means) if len(means) > 1 else None

    def seed_noise(self, metric) -> Optional[float]:
        """The median over frameworks (two seeds or more) of their min-max range over seeds."""
        spreads = [e.spread(metric) for e in self.entries if len(e.values[metric]) > 1]
        return statistics.median(spreads) if spreads else None

    def judge(self):
        for entry in self.entries:
            for metric in METRICS:
                pool = [
                    v for other in self.entries if other is not entry for v in other.values[metric]
                ]
                mean = entry.mean(metric)
                if mean is not None and len(pool) >= 2:
                    entry.outside[metric] = not min(pool) <= mean <= max(pool)

    @property
    def flagged(self):
        return [(e.row, m) for e in self.entries for m in METRICS if e.outside.get(m)]


def groups(grid: Grid):
    """The agreement groups of a report's runs: training configurations only, groups of two
    frameworks or more, and only when some configuration holds two seeds or more (else the
    section is left out: [])."""
    found = {}
    for c in grid.configurations:
        if c.first.kind != "train" or c.status == "unsupported":  # rows that lack the task
            continue
        entry = Entry(c.row, c.task, c.column, init_mode(c.first), c.runs)
        found.setdefault((c.task, c.column, entry.init), []).append(entry)
    found = {
        key: entries
        for key, entries in found.items()
        if len({e.runs[0].framework for e in entries if e.values["accuracy"]}) > 1
    }
    if not any(len(e.seeds) > 1 for entries in found.values() for e in entries):
        return []
    result = []
    for (task, column, init), entries in found.items():
        group = Group(task, column, init, sorted(entries, key=lambda e: e.row.lower()))
        group.judge()
        result.append(group)
    return sorted(result, key=lambda g: (g.task, g.column, g.init))


def _where(group):
    return column_heading(group.task, group.column)


def _accuracy(x):
    return "" if x is None else f"{100 * x:.1f} %"


def _points(x):
    return "" if x is None else f"{100 * x:.1f} pt"


def _loss(x):
    return "" if x is None else f"{x:.3f}"


def _range(entry, metric, show):
    low, high = entry.range(metric)
    return "" if low is None else f"{show(low)} – {show(high)}"


def _ratio(across, noise):
    if across is None or not noise:
        return ""
    return f"{across / noise:.1f}×"


NEUTRAL = (
    " init=neutral: every framework starts from the same NumPy-drawn weights on the "
    "same batch order; dropout masks stay each framework's own."
)
LEGEND = (
    "Final test accuracy and final training loss (the last epoch's mean) per framework: "
    "mean and range (min – max) over seeds. Outside: the framework's mean lies outside "
    "the pooled range of every seed of the other frameworks in the same table (its own "
    "seeds left out; not judged when the others have fewer than two runs). Across "
    "frameworks: max – min of the frameworks' means; seed noise: the median over "
    "frameworks of their own range over seeds."
)


SUMMARY_HEADER = [
    "task",
    "frameworks",
    "accuracy across frameworks",
    "accuracy seed noise",
    "accuracy ratio",
    "loss across frameworks",
    "loss seed noise",
    "loss ratio",
    "outside",
]


def summary_row(g):
    """A group's row of the summary: across frameworks against the seed noise."""
    return [
        f"{_where(g)}, init={g.init}",
        str(len(g.entries)),
        _points(g.across("accuracy")),
        _points(g.seed_noise("accuracy")),
        _ratio(g.across("accuracy"), g.seed_noise("accuracy")),
        _loss(g.across("loss")),
        _loss(g.seed_noise("loss")),
        _ratio(g.across("loss"), g.seed_noise("loss")),
        ", ".join(f"{row} ({metric})" for row, metric in g.flagged) or "none",
    ]


def markdown(found, heading=True, shared=None) -> str:
    """The section; heading=False leaves out its `##` line (a documentation block under a
    heading of its own, `report --into FILE --table agreement`); `shared`: the settings every
    run shares (the grid's `uniform`), named once."""
    if not found:
        return ""
    text = ("## Agreement across frameworks\n\n" if heading else "") + LEGEND
    if any(g.init == "neutral" for g in found):
        text += NEUTRAL
    if shared:
        text += f" All runs: {uniform_text(shared)}."
    text += "\n"
    summary = []
    for g in found:
        text += f"\n### {_where(g)}, init={g.init}\n\n"
        if g.task == "densenet":
            text += "Accuracy here: the mean ROC-AUC over the 14 labels.\n\n"
        rows = []
        for e in g.entries:
            seeds = str(len(e.values["accuracy"])) + (f" ({e.not_ok} not ok)" if e.not_ok else "")
            rows.append(
                [
                    e.row,
                    seeds,
                    _accuracy(e.mean("accuracy")),
                    _range(e, "accuracy", _accuracy),
                    _loss(e.mean("loss")),
                    _range(e, "loss", _loss),
                    ", ".join(m for m in METRICS if e.outside.get(m)),
                ]
            )
        text += (
            markdown_table(
                [
                    "framework",
                    "seeds",
                    "accuracy mean",
                    "accuracy min – max",
                    "final loss mean",
                    "final loss min – max",
                    "outside",
                ],
                rows,
            )
            + "\n"
        )
        summary.append(summary_row(g))
    text += (
        "\n### Across frameworks against the seed noise\n\n"
        + markdown_table(SUMMARY_HEADER, summary)
        + "\n"
    )
    return text


CSV_FIELDS = [
    "task",
    "column",
    "init",
    "framework",
    "seeds",
    "not_ok",
    "accuracy_mean",
    "accuracy_min",
    "accuracy_max",
    "loss_mean",
    "loss_min",
    "loss_max",
    "accuracy_outside",
    "loss_outside",
    "accuracy_across_frameworks",
    "accuracy_seed_noise",
    "loss_across_frameworks",
    "loss_seed_noise",
]


def write_csv(found, path: Path):
    """agreement.csv: one row per framework x task (x column, init), the group's figures
    repeated on each of its rows."""
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        writer.writeheader()
        for g in found:
            for e in g.entries:
                row = {
                    "task": g.task,
                    "column": g.column,
                    "init": g.init,
                    "framework": e.row,
                    "seeds": len(e.values["accuracy"]),
                    "not_ok": e.not_ok,
                    "accuracy_across_frameworks": g.across("accuracy"),
                    "accuracy_seed_noise": g.seed_noise("accuracy"),
                    "loss_across_frameworks": g.across("loss"),
                    "loss_seed_noise": g.seed_noise("loss"),
                }
                for metric in METRICS:
                    low, high = e.range(metric)
                    row.update(
                        {
                            f"{metric}_mean": e.mean(metric),
                            f"{metric}_min": low,
                            f"{metric}_max": high,
                            f"{metric}_outside": e.outside.get(metric),
                        }
                    )
                writer.writerow({k: "" if v is None else v for k, v in row.items()})
