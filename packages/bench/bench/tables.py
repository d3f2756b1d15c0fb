"""The report's text: DeepLearningFrameworks' markdown table (framework rows; per task the
time with the test accuracy beside it, one column per hardware/precision found) and a CSV row
per run."""
import csv
import json
from pathlib import Path

from .runs import Grid

TITLES = {"cnn": "CNN", "resnet50": "ResNet-50 s/1000 img", "rnn": "RNN",  # the 2018 headers
          "densenet": "DenseNet-121"}
FAILED, INVALID, UNSUPPORTED, MISSING = "failed", "invalid", "—", ""

LEGEND = ("Seconds: CNN, RNN and DenseNet-121, training (every epoch's loop) with test "
          "accuracy (DenseNet-121: mean ROC-AUC) after the dot; ResNet-50, seconds per 1,000 "
          "images. Repeated runs: median ± half their range "
          "(n runs). failed: the run failed; invalid: its loss became NaN/inf or diverged (no "
          "valid measurement); —: unsupported; blank: not run.")


def number(x):
    """Three significant figures or so, as DeepLearningFrameworks' table: 169, 21.3, 7.70."""
    if x is None:
        return ""
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.1f}" if abs(x) >= 10 else f"{x:.2f}"


def percent(x):
    return f"{100 * x:.1f} %"


def cell(configuration):
    """`169 · 77.2 %`, `169 ±1.5 (n=3) · 77.2 %`, `failed`, `—` or blank."""
    if configuration is None:
        return MISSING
    status = configuration.status
    if status != "ok":
        return {"failed": FAILED, "invalid": INVALID}.get(status, UNSUPPORTED)
    ok = configuration.ok
    text = number(configuration.seconds)
    if len(ok) > 1:
        text += f" ±{number(configuration.spread / 2)} (n={len(ok)})"
    if configuration.accuracy is not None:
        text += f" · {percent(configuration.accuracy)}"
    if configuration.failed:
        text += f" ({len(configuration.failed)} failed)"
    if configuration.invalid:
        text += f" ({len(configuration.invalid)} invalid)"
    return text


def title(task):
    return TITLES.get(task, task)


def _row(cells):
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def markdown_table(header, rows):
    lines = [_row(header), "|" + "---|" * len(header)]
    return "\n".join(lines + [_row(r) for r in rows])


def markdown(grid: Grid, reference=None) -> str:
    """DeepLearningFrameworks' layout; with `reference` (bench.reference_2018.Reference), its
    2018 figures for the same frameworks beside each task's own columns."""
    header, getters = ["framework"], []
    for task, columns in grid.columns.items():
        for column in columns:
            header.append(f"{title(task)} {column}")
            getters.append(lambda row, t=task, c=column: cell(grid.cells.get((row, t, c))))
        for gpu in (reference.gpus(task) if reference else ()):
            header.append(f"{title(task)} {gpu} (2018)")
            getters.append(lambda row, t=task, g=gpu: reference.text(
                grid.display_names[row], t, g))
    rows = [[row] + [get(row) for get in getters] for row in grid.rows]
    shared = ", ".join(f"{k} {v}" for k, v in grid.uniform.items())
    text = LEGEND + (f" All runs: {shared}." if shared else "") + "\n\n"
    text += markdown_table(header, rows) + "\n"
    if reference:
        text += ("\n(2018): DeepLearningFrameworks' published figures, " + reference.hardware
                 + " — other hardware and software than the columns beside them.\n")
    return text


# one flat row per run: what a spreadsheet needs, nothing nested
CSV_FIELDS = ["path", "status", "task", "framework", "display_name", "device", "hardware",
              "precision", "preset", "data", "hostname", "tuned", "train_seconds",
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
           "data": run.data, "hostname": run.hostname,
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
    """`scaling_efficiency`: run path -> its figure (bench.scaling), for N-device runs."""
    efficiency = scaling_efficiency or {}
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        writer.writeheader()
        writer.writerows(csv_row(run, efficiency.get(str(run.path))) for run in runs)
