"""Learning curves: per task, the test accuracy and the test loss against the training seconds
so far, one line per configuration (framework row, and column where a task has several), from
the curve each training result records (an evaluation at every epoch's end, outside the timed
window).

A line is the median over the configuration's ok runs (its seeds) at each epoch: the median
training seconds at that epoch's end against the median accuracy (loss); the band around it
runs from the lowest to the highest run at that epoch, and whiskers at each point show the
runs' range of both (a run stopped at its target after one epoch is a point, not a line).
The task's quality target is a dashed line on the accuracy chart. `curves_<task>.png` in the
report; the page draws the same data as SVG (bench.report.site.curves).
"""

import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from . import looks, quality
from .collection import Configuration, Grid
from .tables import title

METRICS = ("accuracy", "loss")
LABELS = {"accuracy": "test accuracy", "loss": "test loss"}


@dataclass
class Point:
    epoch: int
    seconds: float  # the median training seconds at the epoch's end
    values: dict  # metric -> (median, low, high) over the runs, or absent
    runs: int
    seconds_range: tuple = (None, None)  # the runs' lowest and highest training seconds


@dataclass
class Curve:
    """One configuration's learning curve."""

    label: str
    configuration: Configuration
    target: Optional[float]
    points: list = field(default_factory=list)
    look: looks.Look = looks.look(0)  # the row's, as in every chart of the report
    dash: str = "solid"  # which of the row's lines in this chart (one per column)

    def line(self, metric):
        """[(seconds, median, low, high)] of the points that have the metric."""
        return [(p.seconds, *p.values[metric]) for p in self.points if metric in p.values]


def _number(x):
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x) if math.isfinite(x) else None


def curve_of(configuration: Configuration, label: str) -> Optional[Curve]:
    """The configuration's curve (None when none of its ok runs recorded one)."""
    by_epoch = {}
    for run in configuration.ok:
        for point in run.result.get("curve") or []:
            by_epoch.setdefault(point.get("epoch"), []).append(point)
    by_epoch.pop(None, None)
    if not by_epoch:
        return None
    targets = [t for t in map(quality.target_of, configuration.ok) if t is not None]
    found = Curve(label, configuration, max(targets) if targets else None)
    for epoch in sorted(by_epoch):
        points = by_epoch[epoch]
        seconds = [s for s in (_number(p.get("train_seconds")) for p in points) if s is not None]
        if not seconds:
            continue
        values = {}
        for metric in METRICS:
            ys = [y for y in (_number(p.get(metric)) for p in points) if y is not None]
            if ys:
                values[metric] = (statistics.median(ys), min(ys), max(ys))
        found.points.append(
            Point(
                epoch, statistics.median(seconds), values, len(points), (min(seconds), max(seconds))
            )
        )
    return found if found.points else None


def curves(grid: Grid):
    """{task: [Curve]} for every training task with a recorded curve, rows in the table's
    order; each with its row's look."""
    found, row_looks = {}, looks.by_row(grid.rows)
    for task, columns in grid.columns.items():
        mine = []
        for row in grid.rows:
            for j, column in enumerate(columns):
                c = grid.cells.get((row, task, column))
                if c is None or c.first.kind != "train" or not c.ok:
                    continue
                label = row + (f", {column}" if len(columns) > 1 and column else "")
                line = curve_of(c, label)
                if line is not None:
                    line.look, line.dash = row_looks[row], looks.dash(j)
                    mine.append(line)
        if mine:
            found[task] = mine
    return found


def figure(task, found, uniform=""):
    """A matplotlib Figure: test accuracy (left) and test loss (right) against training
    seconds, a line and band per curve, the quality target dashed."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 4.5), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 2)
    for ax, metric in zip(axes, METRICS):
        for curve in found:
            line = curve.line(metric)
            if not line:
                continue
            xs, ys, lows, highs = zip(*line)
            colour = curve.look.colour
            ax.plot(
                xs,
                ys,
                marker=curve.look.marker,
                markersize=4,
                linestyle=curve.dash,
                color=colour,
                label=curve.label,
            )
            if any(lo != hi for lo, hi in zip(lows, highs)):
                ax.fill_between(xs, lows, highs, color=colour, alpha=0.2, linewidth=0)
            spans = [p.seconds_range for p in curve.points if metric in p.values]
            ax.errorbar(
                xs,
                ys,
                yerr=[[y - lo for y, lo in zip(ys, lows)], [hi - y for y, hi in zip(ys, highs)]],
                xerr=[
                    [x - (a if a is not None else x) for x, (a, _) in zip(xs, spans)],
                    [(b if b is not None else x) - x for x, (_, b) in zip(xs, spans)],
                ],
                fmt="none",
                ecolor=colour,
                alpha=0.5,
                linewidth=1,
            )
        if metric == "accuracy":
            for target in sorted({c.target for c in found if c.target is not None}):
                ax.axhline(target, color="grey", linestyle="--", linewidth=1)
                ax.annotate(
                    f"target {100 * target:.0f} %",
                    (0, target),
                    xycoords=("axes fraction", "data"),
                    xytext=(4, 3),
                    textcoords="offset points",
                    fontsize=7,
                    color="grey",
                )
        ax.set_xlabel("training seconds (evaluations outside the timed window)")
        ax.set_ylabel(
            LABELS[metric]
            + (" (higher is better)" if metric == "accuracy" else " (lower is better)")
        )
        ax.set_xlim(left=0)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle(
        f"{title(task)}: learning curves (median over seeds, band: min–max)"
        + (f", {uniform}" if uniform else ""),
        fontsize=10,
    )
    return fig


def write_charts(grid: Grid, directory: Path, uniform=""):
    """<directory>/curves_<task>.png for every task with a curve; returns the paths."""
    paths = []
    for task, found in curves(grid).items():
        path = Path(directory) / f"curves_{task}.png"
        figure(task, found, uniform).savefig(path, dpi=110)
        paths.append(path)
    return paths
