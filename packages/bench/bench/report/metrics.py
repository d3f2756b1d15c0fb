"""What a report's cells show: the metric (steady-state throughput, total time, throughput over
every epoch, the first epoch's time, the time to the quality target, the host utilisation)
read from a result, and repeated runs summarised as their median, spread and count.

The headline below `preset=full` is steady-state throughput: a short run's total time is mostly
its first epoch (graph building, autotuning, compilation), which says little about the
framework's speed; a full run's total is the figure the 2018 table printed. When no training
run measured a steady state (one epoch each, `preset=quick`) the headline is the throughput
over every epoch, which is what such a run measured, named as such.
"""

import statistics
from dataclasses import dataclass
from typing import Optional

IQR_FROM = 5  # repeats from which the spread is the interquartile range, not min-max


@dataclass(frozen=True)
class Metric:
    name: str
    title: str
    higher_is_better: bool
    units: dict  # task kind -> unit

    def unit(self, kind):
        return self.units[kind]

    def value(self, result, kind) -> Optional[float]:
        """This metric of one result, or None where it has none."""
        stats = result.get("stats") or {}
        return _READERS[self.name](stats, result, kind)


def _steady(stats, result, kind):
    return stats.get("examples_per_second" if kind == "train" else "images_per_second")


def _total(stats, result, kind):
    return stats.get("train_seconds" if kind == "train" else "seconds_per_1000_images")


def _throughput(stats, result, kind):
    """Training: every example of every epoch over every epoch's time, the first included."""
    if kind != "train":
        return stats.get("images_per_second")
    epochs = (result.get("timings") or {}).get("epoch") or []
    per_epoch = stats.get("steady_epoch_seconds") or stats.get("first_epoch_seconds")
    rate, total = stats.get("examples_per_second"), stats.get("train_seconds")
    if not (epochs and per_epoch and rate and total):
        return None
    return rate * per_epoch * len(epochs) / total


def _first(stats, result, kind):
    return stats.get("first_epoch_seconds" if kind == "train" else "warmup_seconds")


def _utilisation(stats, result, kind):
    return stats.get("host_utilisation")


def _time_to_target(stats, result, kind):
    """Training seconds until the first evaluation at or above the quality target (None: not
    reached, no target, or an inference task)."""
    return stats.get("time_to_target_s") if kind == "train" else None


_READERS = {
    "steady": _steady,
    "total": _total,
    "throughput": _throughput,
    "first": _first,
    "utilisation": _utilisation,
    "time_to_target": _time_to_target,
}
METRICS = {
    "steady": Metric(
        "steady", "steady-state throughput", True, {"train": "examples/s", "inference": "images/s"}
    ),
    "total": Metric(
        "total", "total time", False, {"train": "s (every epoch)", "inference": "s per 1000 images"}
    ),
    "throughput": Metric(
        "throughput",
        "throughput over every epoch",
        True,
        {"train": "examples/s", "inference": "images/s"},
    ),
    "first": Metric(
        "first",
        "first epoch's time",
        False,
        {"train": "s (first epoch)", "inference": "s (warm-up)"},
    ),
    # achieved model FLOP/s over the host's peak matrix product (`python -m bench peak`)
    "utilisation": Metric(
        "utilisation",
        "host utilisation",
        True,
        {"train": "of the host's peak", "inference": "of the host's peak"},
    ),
    # MLPerf's and DAWNBench's figure: training seconds until the test accuracy first reached
    # the task's quality target (evaluations at epoch ends, outside the timed window)
    "time_to_target": Metric(
        "time_to_target",
        "time to the quality target",
        False,
        {"train": "s to the target", "inference": "none"},
    ),
}
CHOICES = ("auto", *METRICS)


def headline(presets, chosen="auto", steady_state=True) -> Metric:
    """The metric a report shows: the one chosen, or (auto) total time when every run is a full
    run, else steady-state throughput (`steady_state` False: no training run measured a
    steady state, and the throughput over every epoch is what they measured)."""
    if chosen != "auto":
        return METRICS[chosen]
    if presets and set(presets) == {"full"}:
        return METRICS["total"]
    return METRICS["steady" if steady_state else "throughput"]


@dataclass(frozen=True)
class Summary:
    """Repeated runs of one configuration: median, spread (low, high) and count."""

    median: float
    low: float
    high: float
    n: int
    iqr: bool  # the spread is the interquartile range (IQR_FROM runs or more), else min-max

    @classmethod
    def of(cls, values):
        values = sorted(v for v in values if v is not None)
        if not values:
            return None
        if len(values) >= IQR_FROM:
            q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
            return cls(statistics.median(values), q1, q3, len(values), True)
        return cls(statistics.median(values), values[0], values[-1], len(values), False)

    def text(self, number):
        """`324 (318–330, n=3)`, `324 (IQR 320–328, n=5)`, `324 (n=1)`."""
        if self.n == 1:
            return f"{number(self.median)} (n=1)"
        spread = f"{number(self.low)}–{number(self.high)}"
        return f"{number(self.median)} ({'IQR ' if self.iqr else ''}{spread}, n={self.n})"


def speed_ratio(metric: Metric, a: Summary, b: Summary):
    """How many times faster a ran than b by this metric (>1: a faster), with the range the
    two spreads allow: (ratio, low, high)."""
    if metric.higher_is_better:
        return a.median / b.median, a.low / b.high, a.high / b.low
    return b.median / a.median, b.low / a.high, b.high / a.low
