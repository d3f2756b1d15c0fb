"""A configuration over time: its results ordered by date and grouped into points by git commit
(the runs of one commit are repeats), the report's metric per point, and each point judged
against the one before by the one rule of bench.report.verdict. `python -m bench report
--history DIRS...` adds its table to report.md and writes history.csv and
history_<task>.png; the page shows the same charts. Only configurations with two points or more
have a history."""

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from . import looks
from .collection import Grid
from .metrics import Metric, Summary
from .tables import heading, markdown_table, number, title
from .verdict import SLOWER, Verdict, judge


@dataclass
class Point:
    commit: str
    date: str  # the earliest finish of its runs (ISO 8601)
    values: list  # of its undisturbed runs
    summary: Optional[Summary]  # None: every run of it was disturbed
    verdict: Optional[Verdict] = None  # against the point before
    busy: str = ""  # why it is not judged: the host disturbed its runs


@dataclass
class Series:
    row: str
    task: str
    column: str
    points: list = field(default_factory=list)

    @property
    def label(self):
        return f"{self.row}, {heading(self.task, self.column)}"


def series(grid: Grid, min_change=0.05, min_runs=2):
    """[Series] of every configuration with results of two commits (or dates) or more."""
    found = []
    for c in grid.configurations:
        by_point, disturbed = {}, {}
        for run in c.ok:
            value = run.value(grid.metric)
            if value is None:
                continue
            key = run.commit or run.date[:10]
            date, values = by_point.get(key, (run.date, []))
            if run.disturbed:  # the host's, not the configuration's: out of the figure
                disturbed.setdefault(key, []).append(run)
                value = None
            by_point[key] = (min(date, run.date), values + ([value] if value is not None else []))
        if len(by_point) < 2:
            continue
        points = sorted(
            (
                Point(commit, date, values, Summary.of(values))
                for commit, (date, values) in by_point.items()
            ),
            key=lambda p: p.date,
        )
        for point in points:
            runs = disturbed.get(point.commit) or []
            if runs and len(point.values) < min_runs:
                point.busy = (
                    f"not judged: the host was busy during its runs ("
                    f"{'; '.join(runs[0].host_reasons) or 'flagged disturbed'}; {len(runs)} "
                    f"disturbed)"
                )
        for before, point in zip(points, points[1:]):
            if point.busy or before.busy or not point.values or not before.values:
                continue
            point.verdict = judge(grid.metric, point.values, before.values, min_change, min_runs)
        found.append(Series(c.row, c.task, c.column, points))
    return sorted(found, key=lambda s: (s.task, s.row.lower(), s.column))


def short_commit(text):
    """The first 10 hex digits, keeping "-dirty" (an uncommitted tree is its own point)."""
    return (text[:10] + ("-dirty" if text.endswith("-dirty") else "")) if text else ""


HEADER = ["configuration", "date", "commit", "value", "change"]


def rows(found, min_runs=2):
    shown = []
    for s in found:
        for i, point in enumerate(s.points):
            change = (
                point.busy
                or (point.verdict.text(min_runs) if point.verdict else "")
                or ("first" if i == 0 else "not judged")
            )
            shown.append(
                [
                    s.label,
                    point.date[:19],
                    short_commit(point.commit),
                    point.summary.text(number) if point.summary else "-",
                    change,
                ]
            )
    return shown


def markdown(found, metric: Metric, min_runs=2) -> str:
    if not found:
        return (
            "No history: no configuration has results of two commits or dates in these "
            "directories.\n"
        )
    return (
        f"History, by {metric.title} ({metric.unit('train')} for training, "
        f"{metric.unit('inference')} for inference): each point the runs of one commit, "
        f"each change judged against the point before (median beyond the threshold and "
        f"runs not overlapping).\n\n" + markdown_table(HEADER, rows(found, min_runs)) + "\n"
    )


def write_csv(found, path: Path):
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(
            [
                "framework",
                "task",
                "column",
                "date",
                "commit",
                "median",
                "low",
                "high",
                "n",
                "change",
            ]
        )
        for s in found:
            for p in s.points:
                writer.writerow(
                    [
                        s.row,
                        s.task,
                        s.column,
                        p.date,
                        p.commit,
                        *(
                            (p.summary.median, p.summary.low, p.summary.high, p.summary.n)
                            if p.summary
                            else ("", "", "", 0)
                        ),
                        p.verdict.kind if p.verdict else ("not judged" if p.busy else ""),
                    ]
                )


def figures(found, metric: Metric, row_looks=None):
    """{task: Figure}: one line per configuration over its points, in its row's look
    (`row_looks`: {row: bench.report.looks.Look}, the report's; by default by the rows'
    order here); a point judged slower than the one before is a large red triangle down,
    faster a green triangle up."""
    row_looks = row_looks or looks.by_row(sorted({s.row for s in found}, key=str.lower))
    charts = {}
    for task in dict.fromkeys(s.task for s in found):
        figure = Figure(figsize=(8, 4.5), layout="constrained")
        FigureCanvasAgg(figure)
        axes = figure.add_subplot()
        mine = [x for x in found if x.task == task]
        # one x position per commit (or date), in date order across the task's series
        firsts = {}
        for s in mine:
            for p in s.points:
                key = p.commit or p.date[:10]
                firsts[key] = min(firsts.get(key, p.date), p.date)
        order = sorted(firsts, key=firsts.get)
        for s in mine:
            shown = [p for p in s.points if p.summary is not None]  # not the host-busy ones
            xs = [order.index(p.commit or p.date[:10]) for p in shown]
            axes.errorbar(
                xs,
                [p.summary.median for p in shown],
                yerr=[
                    [p.summary.median - p.summary.low for p in shown],
                    [p.summary.high - p.summary.median for p in shown],
                ],
                marker=row_looks[s.row].marker,
                capsize=3,
                color=row_looks[s.row].colour,
                label=s.label,
            )
            for x, p in zip(xs, shown):
                if p.verdict and p.verdict.changed:
                    slower = p.verdict.kind == SLOWER
                    axes.plot(
                        x,
                        p.summary.median,
                        marker="v" if slower else "^",
                        markersize=12,
                        color="red" if slower else "green",
                    )
        axes.set_xticks(
            range(len(order)),
            [
                f"{short_commit(k) if k in firsts and len(k) > 10 else ''}\n{firsts[k][:10]}"
                for k in order
            ],
            fontsize=7,
        )
        better = "higher" if metric.higher_is_better else "lower"
        axes.set_ylabel(f"{metric.title} ({better} is better)")
        axes.set_title(f"{title(task)}: history by commit")
        axes.legend(fontsize=7)
        charts[task] = figure
    return charts


def write_charts(found, metric, directory: Path, row_looks=None):
    paths = []
    for task, figure in figures(found, metric, row_looks).items():
        path = Path(directory) / f"history_{task}.png"
        figure.savefig(path, dpi=120)
        paths.append(path)
    return paths
