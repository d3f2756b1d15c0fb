"""Files kept per host in the cache directory, never in the repository:
`<cache>/hosts/<host slug>/peak.json` (the host's peak matrix-multiply FLOP/s, measured by
`python -m bench peak`) and `<cache>/hosts/<host slug>/tuning/...` (bench.run.profiles). The
slug is sysinfo.host_slug: CPU model, the flags that pick kernels and the CPUs usable, or the
GPU model. A run reads the peak to report its `host_utilisation`."""
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
            isinstance(figures, dict) and all(isinstance(value, (float, str))
                                              for value in figures.values())
            for figures in frameworks.values()):
        return "no frameworks' figures (FLOP/s or why none)"
    if not isinstance(peak.get("precisions"), dict):
        return "no precisions"
    for precision, entry in peak["precisions"].items():
        flops = entry.get("flops") if isinstance(entry, dict) else None
        if (not isinstance(flops, (int, float)) or isinstance(flops, bool)
                or not math.isfinite(flops) or flops <= 0):
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
        print(f"bench: {file} is not a host peak ({problem}); {rebuild}", file=sys.stderr,
              flush=True)
        return None
    peak["file"] = str(file)
    return peak


def peak_record(peak, precision):
    """What result.json keeps of the host peak at one precision: {flops, framework, file}."""
    entry = ((peak or {}).get("precisions") or {}).get(precision)
    if not entry:
        return None
    return {"flops": entry["flops"], "framework": entry["framework"], "file": peak["file"]}
