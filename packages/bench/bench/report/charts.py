"""One PNG bar chart per task: the report's metric for each framework (grouped bars, one per
hardware / precision column), the runs' spread as an error bar, the test accuracy on the bar.

Matplotlib's object API with the Agg canvas: no pyplot state, no display needed.
"""

from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .collection import Grid, uniform_text
from .tables import NOT_OK, number, percent, title


def task_figure(grid: Grid, task) -> Figure:
    columns, rows = grid.columns[task], grid.rows
    width = 0.8 / len(columns)
    figure = Figure(
        figsize=(max(6.0, 1.2 * len(rows) * len(columns) + 2), 4.5), layout="constrained"
    )
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    kind = None
    for j, column in enumerate(columns):
        xs, heights, low, high, notes = [], [], [], [], []
        for i, row in enumerate(rows):
            c = grid.cells.get((row, task, column))
            if c is None:
                continue
            kind = kind or c.first.kind
            x = i + (j - (len(columns) - 1) / 2) * width
            if c.status != "ok":  # no bar: say why, in the column's colour
                note = NOT_OK.get(c.status, "unsupported")
                axes.annotate(
                    note, (x, 0), ha="center", va="bottom", fontsize=8, color=f"C{j}", rotation=90
                )
                continue
            summary = c.summary(grid.metric)
            if summary is None:
                continue
            xs.append(x)
            heights.append(summary.median)
            low.append(summary.median - summary.low)
            high.append(summary.high - summary.median)
            notes.append(
                number(summary.median)
                + (f"\n{percent(c.accuracy)}" if c.accuracy is not None else "")
            )
        bars = axes.bar(
            xs,
            heights,
            width,
            yerr=[low, high],
            capsize=3,
            label=column or "_nolegend_",
            color=f"C{j}",
        )
        axes.bar_label(bars, notes, fontsize=7, padding=2)
    axes.set_xlim(-0.5, len(rows) - 0.5)  # every row, also one with no bar at all
    axes.set_xticks(
        range(len(rows)),
        rows,
        rotation=20 if len(rows) > 4 else 0,
        ha="right" if len(rows) > 4 else "center",
    )
    better = "higher" if grid.metric.higher_is_better else "lower"
    axes.set_ylabel(
        f"{grid.metric.title}, {grid.metric.unit(kind or 'train')} ({better} is better)"
    )
    shared = uniform_text(grid.uniform)
    axes.set_title(title(task) + (f", {shared}" if shared else ""))
    axes.margins(y=0.2)
    if any(columns):  # what tells the bars apart, where anything does
        axes.legend(fontsize=8)
    return figure


def write_charts(grid: Grid, directory: Path):
    """<directory>/<task>.png for every task in the grid; returns the paths."""
    paths = []
    for task in grid.columns:
        path = Path(directory) / f"{task}.png"
        task_figure(grid, task).savefig(path, dpi=120)
        paths.append(path)
    return paths
