"""Where a run's wall time went, outside its timed windows too, named alike for every
framework: the result's `phases` (seconds), so that a sweep's and a report's share of the wall
time spent measuring, and each framework's fixed costs, follow from its results.

The orchestrator's: `start` (a single run's process from its start: interpreter, imports,
Hydra's composition, the run's directory), `checks` (the host record, sizes, capabilities,
the framework's environment), `prepare` (the data, prepared or found in the cache), `canary`
(before and after the workers: bench.run.canary), `record` (statistics, the environment
against its lock, the host's state). The worker's (bench_shared.worker, the same in every
framework's): `interpreter` (the worker's process start to its main: Python, or R with
reticulate, and the runtime's imports), `framework_import` (the package, the framework and
its setup), `task_import`, `data_load`, `build` (the model, and init=neutral's weights),
`calibration` (int8), `warmup` (inference), `timed` (the epochs, or the inference pass: what
a result ranks by), `evaluation`, `peak` (the framework's matmul peak, once per host), and
`worker_other`: the rest of the worker's wall time (its environment record, writing its result,
its exit). A phase that never ran is not there: a run refused or failed half-way records as far
as it got.
"""

import time

from bench_shared.timing import process_age


class Clock:
    """The orchestrator's laps: each lap(name) adds the time since the last one to `name`."""

    def __init__(self, single_run=True):
        self.found = {}
        if single_run:  # a sweep's later job: its process started with the sweep
            age = process_age()
            if age is not None:
                self.found["start"] = round(age, 4)
        self.mark = time.monotonic()

    def lap(self, name):
        now = time.monotonic()
        self.found[name] = round(self.found.get(name, 0.0) + now - self.mark, 4)
        self.mark = now
        return self.found[name]


def _sum(value):
    if isinstance(value, list):
        return sum(v for v in value if isinstance(v, (int, float)))
    return value if isinstance(value, (int, float)) else 0.0


def of(clock: Clock, raw):
    """The whole run's phases: the orchestrator's laps so far, with the worker's time broken
    down by its own phases and timings; `record` is timed up to this call."""
    found = dict(clock.found)
    worker = found.pop("worker", None)
    clock.lap("record")
    found["record"] = clock.found["record"]
    if worker is None:
        return found
    timings, own = raw.get("timings") or {}, raw.get("phases") or {}
    inside = {
        "interpreter": own.get("interpreter"),
        "framework_import": own.get("framework_import"),
        "task_import": own.get("task_import"),
        "data_load": timings.get("data_load"),
        "build": _sum(timings.get("build")) + _sum(timings.get("init")) or None,
        "calibration": _sum(timings.get("calibration")) or None,
        "warmup": _sum(timings.get("warmup")) or None,
        "timed": _sum(timings.get("epoch")) + _sum(timings.get("inference")) or None,
        "evaluation": timings.get("evaluation"),
        "peak": timings.get("peak"),
    }
    inside = {k: round(float(v), 4) for k, v in inside.items() if v}
    inside["worker_other"] = round(max(0.0, worker - sum(inside.values())), 4)
    found.update(inside)
    return found
