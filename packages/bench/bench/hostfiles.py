"""Files kept per host in the cache directory, never in the repository:
`<cache>/hosts/<host slug>/peak.json` (bench.peak) and
`<cache>/hosts/<host slug>/tuning/<framework>_<task>_<device>_<precision>.json` (bench.profiles,
with its `.rounds.json` working file). The slug is sysinfo.host_slug: CPU model, the flags that
pick kernels and the CPUs usable, or the GPU model."""
import json
import os
from pathlib import Path

from bench_shared import jsonsafe

from . import sysinfo
from .data.cache import cache_root


def host_dir(cache_dir, key) -> Path:
    return cache_root(cache_dir) / "hosts" / sysinfo.host_slug(key)


def read_json(path: Path):
    """The file's JSON, or None when there is no file; a damaged file is a ValueError naming it."""
    try:
        text = Path(path).read_text()
    except FileNotFoundError:
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{path} is not JSON ({exc}); delete it to start again") from None


def write_json(path: Path, obj):
    """Written whole or not at all: a reader never sees half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(jsonsafe.finite(obj), indent=1, sort_keys=True, allow_nan=False))
    os.replace(tmp, path)
