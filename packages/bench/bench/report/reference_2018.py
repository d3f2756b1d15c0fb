"""DeepLearningFrameworks' 2018 results (SPEC.md's last table) as data: reference_2018.csv,
package data.

Shown beside our own numbers only like for like: a task's 2018 columns sit beside its cells
when every run of that task was a full run (SPEC's sizes) and the cells show total time, the
figure the 2018 table printed. For shorter runs the report says so and compares per training
example (or per image) instead, labelled as such: a smoke run's seconds beside a full run's
would mislead. Other GPUs (K80, P100), CUDA 8, cuDNN 6, real CIFAR-10/IMDB: a reading aid.
"""

import csv
from pathlib import Path

from bench_shared import spec

from .collection import Grid
from .tables import cell, markdown_table, number, title

DATA = Path(__file__).resolve().parent / "reference_2018.csv"


class Reference:
    def __init__(self, rows, hardware):
        self.hardware = hardware
        self.frameworks = list(dict.fromkeys(r["framework"] for r in rows))  # as published
        self.texts = {(r["framework"], r["task"], r["gpu"]): r["seconds"] for r in rows}
        self._by_name = {fw.casefold(): fw for fw in self.frameworks}

    def tasks(self):
        return list(dict.fromkeys(task for _, task, _ in self.texts))

    def gpus(self, task):
        return list(dict.fromkeys(gpu for _, t, gpu in self.texts if t == task))

    def text(self, framework, task, gpu):
        """The published figure as printed (e.g. '7.7'), '' when none; `framework` is matched
        by name, case-insensitively (our display names are DeepLearningFrameworks': 'PyTorch')."""
        name = self._by_name.get(str(framework).casefold())
        return self.texts.get((name, task, gpu), "")

    def seconds(self, framework, task, gpu):
        text = self.text(framework, task, gpu)
        return float(text) if text else None

    def markdown(self):
        columns = [(task, gpu) for task in self.tasks() for gpu in self.gpus(task)]
        header = ["framework"] + [f"{title(task)} {gpu}" for task, gpu in columns]
        rows = [
            [fw] + [self.text(fw, task, gpu) for task, gpu in columns] for fw in self.frameworks
        ]
        return (
            f"2018 reference (DeepLearningFrameworks' published figures; {self.hardware}; "
            f"seconds: CNN and RNN training, every epoch; ResNet-50 per 1,000 images; not "
            f"measured here):\n\n{markdown_table(header, rows)}\n"
        )


def load(path: Path = DATA) -> Reference:
    lines = Path(path).read_text().splitlines()
    hardware = next(
        (line.split(":", 1)[1].strip() for line in lines if line.startswith("# hardware:")),
        "hardware unknown",
    )
    rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    for row in rows:
        float(row["seconds"])  # a figure that is not a number is an error in the data file
    return Reference(rows, hardware)


def like_for_like(grid: Grid, task):
    """Why the task's cells cannot sit beside the 2018 seconds, or None when they can."""
    presets = sorted({c.first.preset for c in grid.configurations if c.task == task})
    if presets != ["full"]:
        return f"its runs are preset={','.join(presets)}, the 2018 figures full runs"
    if grid.metric.name != "total":
        return f"the cells show {grid.metric.title}, the 2018 figures total time"
    return None


def extra_columns(grid: Grid, reference: Reference):
    """tables.table's `extra`: the 2018 columns of the tasks that are like for like."""

    def extra(task):
        if like_for_like(grid, task) is not None:
            return []
        return [
            (
                f"{title(task)} {gpu} (2018)",
                lambda row, g=gpu: reference.text(grid.display_names[row], task, g),
            )
            for gpu in reference.gpus(task)
        ]

    return extra


def per_example_seconds(task, seconds):
    """A 2018 figure per training example (all epochs; the first included) or per image."""
    s = spec.TASKS[task]
    if s.kind == "inference":
        return seconds / 1000
    return seconds / (s.train_examples * s.epochs)


def our_per_example(grid: Grid, configuration):
    """Ours per example from steady-state throughput (examples or images per second)."""
    from .metrics import METRICS

    summary = configuration.summary(METRICS["steady"])
    return 1 / summary.median if summary else None


def beside(grid: Grid, reference: Reference):
    """One record per framework, task and 2018 GPU with a 2018 figure: the 2018 total in
    seconds beside our cells' text where like for like, otherwise the 2018 figure per example
    and why it is not like for like."""
    found = []
    for task, columns in grid.columns.items():
        why = like_for_like(grid, task)
        for gpu in reference.gpus(task):
            for row in grid.rows:
                theirs = reference.seconds(grid.display_names[row], task, gpu)
                if theirs is None:
                    continue
                ours = [cell(grid.cells.get((row, task, c)), grid.metric) for c in columns]
                found.append(
                    {
                        "framework": row,
                        "task": task,
                        "gpu": gpu,
                        "seconds_2018": theirs,
                        "per_example_2018": per_example_seconds(task, theirs),
                        "not_like_for_like": why,
                        "here": "; ".join(o for o in ours if o) if why is None else None,
                    }
                )
    return found


def markdown_section(grid: Grid, reference: Reference) -> str:
    """What --reference adds below the table: a note per task that is not like for like with
    a per-example comparison, labelled, then the 2018 table in full."""
    text = ""
    for task, columns in grid.columns.items():
        why = like_for_like(grid, task)
        if why is None or task not in reference.tasks():
            continue
        gpus = reference.gpus(task)
        rows = []
        for row in grid.rows:
            ours = [
                our_per_example(grid, grid.cells[row, task, c])
                if (row, task, c) in grid.cells and grid.cells[row, task, c].status == "ok"
                else None
                for c in columns
            ]
            theirs = [reference.seconds(grid.display_names[row], task, g) for g in gpus]
            if any(v is not None for v in ours):
                rows.append(
                    [row]
                    + [_ms(v) for v in ours]
                    + [_ms(per_example_seconds(task, v)) if v else "" for v in theirs]
                )
        unit = "image" if spec.TASKS[task].kind == "inference" else "training example"
        text += (
            f"\n2018 figures for {title(task)}: not beside the cells ({why}). Per {unit} "
            f"instead, in milliseconds (ours: steady state; 2018: their total over SPEC's "
            f"examples and epochs, first epoch included):\n\n"
            + markdown_table(
                [
                    "framework",
                    *[f"{title(task)} {c}" for c in columns],
                    *[f"{gpu} (2018)" for gpu in gpus],
                ],
                rows,
            )
            + "\n"
        )
    return text + "\n" + reference.markdown()


def _ms(seconds):
    return "" if seconds is None else number(seconds * 1000)
