"""The report's scaling section (task densenet, `devices=N`): how much faster N devices train
than one, for every data-parallel configuration whose one-device run is in the same report.

Per configuration with devices N > 1: the one-device configuration is the one identical in
everything else (framework, options, task sizes, precision, preset, data, hardware); the
speed-up is the ratio of their throughputs (every rank's examples per second, steady epochs;
medians over repeats), the scaling efficiency that speed-up over N (1.0: linear). On a CPU,
N processes share the same cores as the one-device run's threads: an efficiency near 1/N
there means the data-parallel path costs nothing extra, not that it scales.
"""

import json
import statistics
from dataclasses import dataclass
from typing import Optional

from . import tables
from .collection import Configuration, Grid

DEVICES = "devices"


def devices_of(configuration: Configuration) -> int:
    return int(json.loads(dict(configuration.first.identity).get(DEVICES, "1")))


def throughput(configuration: Configuration) -> Optional[float]:
    """The median examples per second of the configuration's ok runs."""
    values = [(r.result.get("stats") or {}).get("examples_per_second") for r in configuration.ok]
    values = [v for v in values if v]
    return statistics.median(values) if values else None


def _without_devices(configuration: Configuration):
    identity = tuple(item for item in configuration.first.identity if item[0] != DEVICES)
    return (identity,) + configuration.key[1:]  # hardware (and host, --by-host) kept


@dataclass
class Scaling:
    configuration: Configuration  # the N-device one
    single: Configuration  # its one-device twin
    devices: int
    speedup: Optional[float]
    efficiency: Optional[float]


def pairs(grid: Grid):
    """A Scaling per N-device configuration whose one-device twin is in the grid."""
    singles = {
        _without_devices(c): c
        for c in grid.configurations
        if c.first.kind == "train" and devices_of(c) == 1
    }
    found = []
    for c in grid.configurations:
        n = devices_of(c)
        single = singles.get(_without_devices(c)) if n > 1 else None
        if single is None:
            continue
        many, one = throughput(c), throughput(single)
        speedup = many / one if many and one else None
        found.append(Scaling(c, single, n, speedup, speedup / n if speedup else None))
    return found


def efficiency_of(grid: Grid):
    """run path -> scaling efficiency, for the CSV's rows of N-device runs."""
    return {str(run.path): s.efficiency for s in pairs(grid) for run in s.configuration.runs}


HEADER = [
    "framework",
    "task",
    "column",
    "devices",
    "examples/s",
    "1 device",
    "speed-up",
    "scaling efficiency",
]
INTRO = (
    "Data-parallel scaling: examples per second (every device's, steady epochs) on N "
    "devices against the same configuration on one; scaling efficiency = speed-up / "
    "N. On a CPU the N processes share the one-device run's cores."
)


def rows(found):
    shown = []
    for s in found:
        c = s.configuration
        shown.append(
            [
                c.row,
                tables.title(c.task),
                c.column,
                str(s.devices),
                tables.number(throughput(c)),
                tables.number(throughput(s.single)),
                f"{s.speedup:.2f}x" if s.speedup else tables.NOT_OK.get(c.status, c.status),
                tables.percent(s.efficiency) if s.efficiency else "",
            ]
        )
    return shown


def markdown(found) -> str:
    return INTRO + "\n\n" + tables.markdown_table(HEADER, rows(found)) + "\n"
