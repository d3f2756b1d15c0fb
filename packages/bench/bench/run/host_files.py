"""Files kept per host in the cache directory, never in the repository:
`<cache>/hosts/<host slug>/peak.json` (the host's peak matrix-multiply FLOP/s, measured by
`python -m bench peak`), `<cache>/hosts/<host slug>/framework_peaks.json` (each framework's
own peak at a precision and settings, measured once by the first such run) and
`<cache>/hosts/<host slug>/tuning/...` (bench.run.profiles). The slug is sysinfo.host_slug:
CPU model, the flags that pick kernels and the CPUs usable, or the GPU model. A run reads the
peaks to report its `utilisation` and `host_utilisation`."""

import hashlib
import json
import math
import sys
from pathlib import Path

from .. import files
from ..data.cache import cache_root
from . import sysinfo

PEAK_COMMAND = "python -m bench peak --redo"


def host_dir(cache_dir, key) -> Path:
    return cache_root(cache_dir) / "hosts" / sysinfo.host_slug(key)


def peak_path(cache_dir, device="cpu", index=0) -> Path:
    return host_dir(cache_dir, sysinfo.host_key(device, index)) / "peak.json"


def _peak_problem(peak):
    """What makes peak (a parsed peak.json) unusable, or None: the fields `python -m bench
    peak` writes and runs read, of the types they have."""
    if not isinstance(peak, dict):
        return "not a JSON object"
    if not isinstance(peak.get("host"), dict) or "device" not in peak["host"]:
        return "no host"
    if not isinstance(peak.get("measured"), str):
        return "no measured time"
    frameworks = peak.get("frameworks")
    if not isinstance(frameworks, dict) or not all(
        isinstance(figures, dict)
        and all(isinstance(value, (float, str)) for value in figures.values())
        for figures in frameworks.values()
    ):
        return "no frameworks' figures (FLOP/s or why none)"
    if not isinstance(peak.get("precisions"), dict):
        return "no precisions"
    for precision, entry in peak["precisions"].items():
        flops = entry.get("flops") if isinstance(entry, dict) else None
        if (
            not isinstance(flops, (int, float))
            or isinstance(flops, bool)
            or not math.isfinite(flops)
            or flops <= 0
        ):
            return f"precisions.{precision}.flops is {flops!r}, not a positive number"
        if not isinstance(entry.get("framework"), str):
            return f"precisions.{precision} names no framework"
    return None


def load_peak(cache_dir, device="cpu", index=0):
    """This host's cached peak (the peak.json document) or None; a damaged file, or one of
    another shape, is reported in one line and ignored (the runs go on without
    host_utilisation)."""
    file = peak_path(cache_dir, device, index)
    rebuild = f"runs report no host_utilisation until `{PEAK_COMMAND}`"
    try:
        peak = files.read_json(file, rebuild)
    except ValueError as exc:
        print(f"bench: {exc}", file=sys.stderr, flush=True)
        return None
    if peak is None:
        return None
    problem = _peak_problem(peak)
    if problem:
        print(
            f"bench: {file} is not a host peak ({problem}); {rebuild}", file=sys.stderr, flush=True
        )
        return None
    peak["file"] = str(file)
    return peak


def peak_record(peak, precision):
    """What result.json keeps of the host peak at one precision: {flops, framework, file}."""
    entry = ((peak or {}).get("precisions") or {}).get(precision)
    if not entry:
        return None
    return {"flops": entry["flops"], "framework": entry["framework"], "file": peak["file"]}


# A framework's own dense-matmul peak at a precision (the denominator of `utilisation`),
# measured by the first run of a framework, precision and settings on a host and kept here:
# later runs take it from <cache>/hosts/<host>/framework_peaks.json instead of measuring it
# again after their training.
FRAMEWORK_PEAKS = "framework_peaks.json"


def framework_peak_key(cfg):
    """What a framework's matmul peak depends on: the framework, the precision, its options
    and environment variables (threads, ...) and the environment its lock built."""
    fw = cfg.framework
    settings = {
        "framework": fw.name,
        "precision": cfg.precision.name,
        "options": dict(fw.options),
        "env": dict(fw.env),
    }
    return hashlib.sha1(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()


def framework_peaks_path(cache_dir, device="cpu", index=0) -> Path:
    return host_dir(cache_dir, sysinfo.host_key(device, index)) / FRAMEWORK_PEAKS


def load_framework_peak(cfg, lock_sha256=None):
    """The kept peak {flops, measured, key} of this run's framework, precision and settings
    on this host, or None (a damaged file is ignored: the run measures again)."""
    try:
        found = files.read_json(
            framework_peaks_path(cfg.data.cache_dir, cfg.device.name, cfg.device.index)
        )
    except ValueError:
        return None
    entry = (found or {}).get(framework_peak_key(cfg)) if isinstance(found, dict) else None
    if not isinstance(entry, dict) or not isinstance(entry.get("flops"), (int, float)):
        return None
    return entry if entry.get("lock_sha256") == lock_sha256 else None


def store_framework_peak(cfg, flops, measured, lock_sha256=None):
    """Keep a framework's measured peak for the next runs of these settings on this host."""
    path = framework_peaks_path(cfg.data.cache_dir, cfg.device.name, cfg.device.index)
    with files.locked(path, waiting="(another run keeps its peak)"):
        try:
            found = files.read_json(path) or {}
        except ValueError:
            found = {}
        found[framework_peak_key(cfg)] = {
            "framework": cfg.framework.name,
            "precision": cfg.precision.name,
            "flops": flops,
            "measured": measured,
            "lock_sha256": lock_sha256,
        }
        files.write_json(path, found)
