"""The report's text: DeepLearningFrameworks' markdown table (framework rows; per task one
column per hardware/precision found, each with its runs' median, spread and count, the test
accuracy beside it, and how many times slower than the task column's fastest row), the
hyperfine-style sentences that compare them, and a CSV row per run."""
import csv
import json
from pathlib import Path

from .collection import Grid
from .metrics import speed_ratio

TITLES = {"cnn": "CNN", "resnet50": "ResNet-50", "rnn": "RNN", "densenet": "DenseNet-121"}
FAILED, INVALID, UNSUPPORTED, MISSING = "failed", "invalid", "—", ""
NOT_OK = {"failed": FAILED, "invalid": INVALID, "not_installed": "not installed",
          "interrupted": "interrupted"}


def legend(grid: Grid):
    m = grid.metric
    better = "higher" if m.higher_is_better else "lower"
    return (f"Cells: {m.title} ({m.unit('train')} for training, {m.unit('inference')} for "
            f"ResNet-50; {better} is better), the median of the repeated runs with its spread "
            f"(min–max; the interquartile range from 5 runs) and their number, then the test "
            f"accuracy (DenseNet-121: mean ROC-AUC). ×: how many times slower than the "
            f"column's fastest row (1.00: the fastest). failed: the run failed; invalid: its "
            f"loss became NaN/inf or diverged; not installed: its environment is not built on "
            f"that host; —: unsupported; blank: not run. `--metric` chooses steady, total, "
            f"throughput or first.")


def number(x):
    """Three significant figures or so, as DeepLearningFrameworks' table: 169, 21.3, 7.70."""
    if x is None:
        return ""
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.1f}" if abs(x) >= 10 else f"{x:.2f}"


def percent(x):
    return f"{100 * x:.1f} %"


def cell(configuration, metric):
    """`324 (318–330, n=3) · 77.2 %`, `failed`, `not installed`, `—` or blank."""
    if configuration is None:
        return MISSING
    status = configuration.status
    if status != "ok":
        return NOT_OK.get(status, UNSUPPORTED)
    summary = configuration.summary(metric)
    text = summary.text(number) if summary else "(no figure)"
    if configuration.accuracy is not None:
        text += f" · {percent(configuration.accuracy)}"
    if configuration.failed:
        text += f" ({len(configuration.failed)} failed)"
    if configuration.invalid:
        text += f" ({len(configuration.invalid)} invalid)"
    return text


def fastest(grid: Grid, task, column):
    """The (row, summary) of the column's fastest ok configuration, or None."""
    found = [(row, grid.cells[row, task, column].summary(grid.metric)) for row in grid.rows
             if (row, task, column) in grid.cells]
    found = [(row, s) for row, s in found if s is not None]
    if not found:
        return None
    key = (lambda rs: rs[1].median) if grid.metric.higher_is_better else \
        (lambda rs: -rs[1].median)
    return max(found, key=key)


def relative(grid: Grid, task, column, row):
    """How many times slower than the column's fastest row, as text ("1.00" for it)."""
    best = fastest(grid, task, column)
    c = grid.cells.get((row, task, column))
    summary = c.summary(grid.metric) if c is not None and c.status == "ok" else None
    if best is None or summary is None:
        return ""
    return f"{speed_ratio(grid.metric, best[1], summary)[0]:.2f}"


def title(task):
    return TITLES.get(task, task)


def _row(cells):
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def markdown_table(header, rows):
    lines = [_row(header), "|" + "---|" * len(header)]
    return "\n".join(lines + [_row(r) for r in rows])


def table(grid: Grid, extra=None):
    """(header, rows) of DeepLearningFrameworks' layout: per task column the cell and its ×;
    `extra(task)` -> [(heading, row -> text)] adds columns after a task's own (the 2018
    figures)."""
    header, getters = ["framework"], []
    for task, columns in grid.columns.items():
        for column in columns:
            header += [f"{title(task)} {column}", f"{title(task)} {column} ×"]
            getters.append(lambda row, t=task, c=column: cell(grid.cells.get((row, t, c)),
                                                             grid.metric))
            getters.append(lambda row, t=task, c=column: relative(grid, t, c, row))
        for heading, get in (extra(task) if extra else ()):
            header.append(heading)
            getters.append(get)
    return header, [[row] + [get(row) for get in getters] for row in grid.rows]


def markdown(grid: Grid, extra=None) -> str:
    """The legend and the table (bench.report.reference_2018 passes the 2018 columns as
    `extra`)."""
    shared = ", ".join(f"{k} {v}" for k, v in grid.uniform.items())
    text = legend(grid) + (f" All runs: {shared}." if shared else "") + "\n\n"
    return text + markdown_table(*table(grid, extra)) + "\n"


def comparisons(grid: Grid):
    """Per task column, hyperfine's sentence: "Keras ran 1.12× (1.05–1.20) faster than
    PyTorch, 1.52× (1.45–1.60) faster than Gluon on CNN (cpu fp32)"; the range is what the
    runs' spreads allow. [(task, column, sentence)]."""
    found = []
    for task, columns in grid.columns.items():
        for column in columns:
            best = fastest(grid, task, column)
            others = [(row, grid.cells[row, task, column].summary(grid.metric))
                      for row in grid.rows if (row, task, column) in grid.cells
                      and row != (best and best[0])]
            others = [(row, s) for row, s in others if s is not None]
            if best is None or not others:
                continue
            others.sort(key=lambda rs: speed_ratio(grid.metric, best[1], rs[1])[0])
            parts = []
            for row, summary in others:
                ratio, low, high = speed_ratio(grid.metric, best[1], summary)
                spread = f" ({low:.2f}–{high:.2f})" if best[1].n > 1 or summary.n > 1 else ""
                parts.append(f"{ratio:.2f}×{spread} faster than {row}")
            found.append((task, column, f"{best[0]} ran " + ", ".join(parts)
                          + f" on {title(task)} ({column})"))
    return found


def comparisons_markdown(grid: Grid) -> str:
    found = comparisons(grid)
    if not found:
        return ""
    return (f"By {grid.metric.title}; the ranges come from the runs' spreads (n=1: none):\n\n"
            + "\n".join(f"- {sentence}." for _, _, sentence in found) + "\n")


# one flat row per run: what a spreadsheet needs, nothing nested
CSV_FIELDS = ["path", "status", "task", "framework", "display_name", "device", "hardware",
              "precision", "preset", "data", "hostname", "finished", "tuned", "train_seconds",
              "first_epoch_seconds", "steady_epoch_seconds", "examples_per_second",
              "seconds_per_1000_images", "images_per_second", "achieved_gflops", "utilisation",
              "host_utilisation", "devices", "scaling_efficiency", "accuracy", "test_examples",
              "param_count",
              "framework_versions", "git_commit", "error"]
STATS = ("train_seconds", "first_epoch_seconds", "steady_epoch_seconds", "examples_per_second",
         "seconds_per_1000_images", "images_per_second", "achieved_gflops", "utilisation",
         "host_utilisation")


def csv_row(run, scaling_efficiency=None):
    r, stats = run.result, run.result.get("stats") or {}
    row = {"path": str(run.path), "status": run.status, "task": run.task,
           "framework": run.framework, "display_name": run.display_name, "device": run.device,
           "hardware": run.hardware, "precision": run.precision, "preset": run.preset,
           "data": run.data, "hostname": run.hostname, "finished": run.date,
           "tuned": bool(r["config"].get("tuned")), "accuracy": r.get("accuracy"),
           "test_examples": r.get("test_examples"), "param_count": r.get("param_count"),
           "framework_versions": json.dumps((r.get("framework") or {}).get("versions") or {},
                                            sort_keys=True),
           "git_commit": (r.get("host") or {}).get("git_commit"),
           "devices": r["config"].get("devices", 1), "scaling_efficiency": scaling_efficiency,
           "error": r.get("error") or ""}
    row.update({k: stats.get(k) for k in STATS})
    return {k: "" if v is None else v for k, v in row.items()}


def write_csv(runs, path: Path, scaling_efficiency=None):
    """`scaling_efficiency`: run path -> its figure (bench.report.scaling), for N-device runs."""
    efficiency = scaling_efficiency or {}
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        writer.writeheader()
        writer.writerows(csv_row(run, efficiency.get(str(run.path))) for run in runs)
