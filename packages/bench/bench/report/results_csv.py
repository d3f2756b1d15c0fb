"""results.csv: one flat row per run read, whatever the tables show — what a spreadsheet needs,
nothing nested (docs/reports.md, "The other files")."""

import csv
import json
from pathlib import Path

from .collection import Result

# one flat row per run: what a spreadsheet needs, nothing nested
CSV_FIELDS = [
    "path",
    "status",
    "task",
    "framework",
    "display_name",
    "device",
    "hardware",
    "precision",
    "preset",
    "data",
    "seed",
    "hostname",
    "finished",
    "tuned",
    "train_seconds",
    "first_epoch_seconds",
    "steady_epoch_seconds",
    "steady_state_measured",
    "examples_per_second",
    "seconds_per_1000_images",
    "images_per_second",
    "achieved_gflops",
    "utilisation",
    "host_utilisation",
    "devices",
    "scaling_efficiency",
    "accuracy",
    "test_examples",
    "quality_target",
    "target_reached",
    "time_to_target_s",
    "target_epoch",
    "peak_rss_bytes",
    "device_peak_bytes",
    "param_count",
    "framework_versions",
    "git_commit",
    "error",
]
STATS = (
    "train_seconds",
    "first_epoch_seconds",
    "steady_epoch_seconds",
    "steady_state_measured",
    "examples_per_second",
    "seconds_per_1000_images",
    "images_per_second",
    "achieved_gflops",
    "utilisation",
    "host_utilisation",
    "quality_target",
    "target_reached",
    "time_to_target_s",
    "target_epoch",
)


def device_peak_bytes(result):
    """The device's peak memory the framework reported (`device_memory`), or None."""
    memory = result.get("device_memory")
    if not isinstance(memory, dict):
        return None
    peaks = [v for k, v in memory.items() if "peak" in k and isinstance(v, (int, float))]
    return max(peaks) if peaks else None


def csv_row(run: Result, scaling_efficiency=None):
    r, stats = run.result, run.result.get("stats") or {}
    row = {
        "path": str(run.path),
        "status": run.status,
        "task": run.task,
        "framework": run.framework,
        "display_name": run.display_name,
        "device": run.device,
        "hardware": run.hardware,
        "precision": run.precision,
        "preset": run.preset,
        "data": run.data,
        "seed": r["config"].get("seed"),
        "hostname": run.hostname,
        "finished": run.date,
        "tuned": bool(r["config"].get("tuned")),
        "accuracy": r.get("accuracy"),
        "test_examples": r.get("test_examples"),
        "peak_rss_bytes": r.get("peak_rss_bytes"),
        "device_peak_bytes": device_peak_bytes(r),
        "param_count": r.get("param_count"),
        "framework_versions": json.dumps(
            (r.get("framework") or {}).get("versions") or {}, sort_keys=True
        ),
        "git_commit": (r.get("host") or {}).get("git_commit"),
        "devices": r["config"].get("devices", 1),
        "scaling_efficiency": scaling_efficiency,
        "error": r.get("error") or "",
    }
    row.update({k: stats.get(k) for k in STATS})
    return {k: "" if v is None else v for k, v in row.items()}


def write_csv(runs, path: Path, scaling_efficiency=None):
    """`scaling_efficiency`: run path -> its figure (bench.report.scaling), for N-device runs."""
    efficiency = scaling_efficiency or {}
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        writer.writeheader()
        writer.writerows(csv_row(run, efficiency.get(str(run.path))) for run in runs)
