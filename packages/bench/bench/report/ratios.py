"""Every ratio with its interval, and whether it may be called a difference at all.

How many times faster configuration A ran than B is the ratio of their medians (by the
report's metric). Its interval is a percentile bootstrap over the repeats: RESAMPLES times,
each side's runs are drawn again with replacement and the ratio of the two medians taken;
the interval holds the middle CONFIDENCE of those ratios. The draws are seeded (SEED), so the
same runs always give the same interval. With fewer than two runs on a side there is no
interval: one run says nothing about the spread.

Runs a sweep placed in rounds (bench.run.rounds) are compared round by round instead, from six
rounds both ran in (the fewest an exact 95 % interval needs; fewer: the bootstrap): the ratio
is the Hodges-Lehmann estimate of the rounds' log-ratios and its interval the exact
signed-rank one (bench.paired), which a slow spell that lasts a round cannot tilt. Disturbed
runs (host_state) are in neither.

A comparison calls A faster (or slower) than B only when
- both configurations are ranked by their quality status (bench.report.quality: neither below
  its quality target nor at chance), and
- the interval lies wholly above (or below) 1 (from rounds: beyond the tie band, e.g. 2 %). An
  interval that holds 1 is "no difference shown" (from rounds: a "tie"); a ratio without an
  interval says so.

`compare(metric, a, b)` is the one entry point: the ratio, its interval and both quality
statuses (`python -m bench check` and `reproduce` use it as the report does);
`against_fastest(grid, configuration)` compares a table cell with its column's fastest
ranked configuration (the × column).
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np

from .. import paired as pairing
from . import quality
from .collection import Configuration, Grid
from .metrics import Metric

CONFIDENCE = 0.95
RESAMPLES = 4000
SEED = 0

FASTER, SLOWER, NO_DIFFERENCE, NO_INTERVAL, NOT_COMPARED, TIE = (
    "faster",
    "slower",
    "no difference shown",
    "no interval",
    "not compared",
    "tie",
)


@dataclass(frozen=True)
class Ratio:
    """How many times faster A ran than B (> 1: A faster; medians), with its interval."""

    ratio: float
    low: Optional[float]  # None: fewer than two runs on a side (paired: too few rounds)
    high: Optional[float]
    runs: tuple  # (runs of A, runs of B)
    paired: Optional[pairing.Paired] = None  # from the rounds both ran in (bench.paired)

    @property
    def has_interval(self) -> bool:
        return self.low is not None

    @property
    def holds_one(self) -> bool:
        return self.has_interval and self.low <= 1.0 <= self.high

    def interval_text(self) -> str:
        """`1.05–1.20`, `1.05–1.20, 8 rounds`, `n=1: no interval`, `5 rounds: too few`."""
        if self.paired is not None:
            rounds = self.paired.rounds
            if not self.has_interval:
                return f"{rounds} round{'s' if rounds != 1 else ''}: too few"
            return f"{self.low:.2f}–{self.high:.2f}, {rounds} rounds"
        if not self.has_interval:
            return "n=1: no interval"
        return f"{self.low:.2f}–{self.high:.2f}"

    def text(self, times="×") -> str:
        """`1.12× (1.05–1.20)`, `1.12× (n=1: no interval)`."""
        return f"{self.ratio:.2f}{times} ({self.interval_text()})"


def _medians(values, draws):
    return np.median(values[draws], axis=1)


def bootstrap(metric: Metric, a_values, b_values) -> Ratio:
    """A's values against B's (each a configuration's runs, by `metric`): the ratio of the
    medians and its seeded percentile-bootstrap interval."""
    a = np.asarray(sorted(a_values), dtype=float)
    b = np.asarray(sorted(b_values), dtype=float)
    if not len(a) or not len(b):
        raise ValueError("a ratio needs a value on both sides")

    def ratio(x, y):  # how many times faster x than y
        return x / y if metric.higher_is_better else y / x

    point = float(ratio(np.median(a), np.median(b)))
    if len(a) < 2 or len(b) < 2:
        return Ratio(point, None, None, (len(a), len(b)))
    rng = np.random.default_rng(SEED)
    draws_a = rng.integers(0, len(a), size=(RESAMPLES, len(a)))
    draws_b = rng.integers(0, len(b), size=(RESAMPLES, len(b)))
    ratios = ratio(_medians(a, draws_a), _medians(b, draws_b))
    tail = (1.0 - CONFIDENCE) / 2
    low, high = np.quantile(ratios, [tail, 1.0 - tail])
    return Ratio(point, float(low), float(high), (len(a), len(b)))


@dataclass(frozen=True)
class Comparison:
    """A against B: the ratio with its interval and both quality statuses."""

    a: Configuration
    b: Configuration
    ratio: Ratio
    quality_a: quality.Quality
    quality_b: quality.Quality

    @property
    def verdict(self) -> str:
        """FASTER or SLOWER (A against B), NO_DIFFERENCE, NO_INTERVAL or NOT_COMPARED; from
        rounds (paired), TIE where the interval does not clear the tie band."""
        if not (self.quality_a.ranked and self.quality_b.ranked):
            return NOT_COMPARED
        if not self.ratio.has_interval:
            return NO_INTERVAL
        if self.ratio.paired is not None:
            return {pairing.FASTER: FASTER, pairing.SLOWER: SLOWER}.get(
                self.ratio.paired.verdict, TIE
            )
        if self.ratio.holds_one:
            return NO_DIFFERENCE
        return FASTER if self.ratio.ratio > 1 else SLOWER

    @property
    def shown(self) -> bool:
        """A difference the runs show: FASTER or SLOWER."""
        return self.verdict in (FASTER, SLOWER)

    def why_not(self, a_name="it", b_name="the other") -> str:
        """Why A and B are not compared (one line), or ""."""
        reasons = [
            f"{name}: {q.reason()}"
            for name, q in ((a_name, self.quality_a), (b_name, self.quality_b))
            if not q.ranked
        ]
        return "; ".join(reasons)


def from_rounds(metric: Metric, a: Configuration, b: Configuration) -> Optional[Ratio]:
    """A against B from the rounds of one sweep both ran in (bench.paired: the Hodges-Lehmann
    ratio and its signed-rank interval, the tie band theirs), or None where they share fewer
    than the six an exact 95 % interval needs (the bootstrap over repeats speaks then)."""
    a_rounds, b_rounds = a.by_round(metric), b.by_round(metric)
    shared = sorted(set(a_rounds) & set(b_rounds))
    if len(shared) < pairing.MIN_ROUNDS:  # no exact 95 % interval yet: the bootstrap's
        return None
    p = pairing.paired(
        [a_rounds[r] for r in shared],
        [b_rounds[r] for r in shared],
        metric.higher_is_better,
        max(a.tie_band, b.tie_band),
    )
    return Ratio(p.ratio, p.low, p.high, (len(shared), len(shared)), p)


def compare(metric: Metric, a: Configuration, b: Configuration) -> Optional[Comparison]:
    """A against B by `metric` (None when either has no value of it): from the rounds both
    ran in where they share any, else the bootstrap of their repeats."""
    a_values, b_values = a.values(metric), b.values(metric)
    if not a_values or not b_values:
        return None
    ratio = from_rounds(metric, a, b) or bootstrap(metric, a_values, b_values)
    return Comparison(a, b, ratio, quality.of(a), quality.of(b))


def fastest(grid: Grid, task, column) -> Optional[Configuration]:
    """The column's fastest configuration by its median among those ranked by quality."""
    found = []
    for row in grid.rows:
        c = grid.cells.get((row, task, column))
        summary = c.summary(grid.metric) if c is not None and c.status == "ok" else None
        if summary is not None and quality.of(c).ranked:
            found.append((summary.median, c))
    if not found:
        return None
    pick = max if grid.metric.higher_is_better else min
    return pick(found, key=lambda mc: mc[0])[1]


def against_fastest(grid: Grid, configuration: Configuration) -> Optional[Comparison]:
    """The column's fastest ranked configuration against this one: its ratio is how many times
    slower this one ran (1.00 for the fastest itself). None when either has no figure."""
    best = fastest(grid, configuration.task, configuration.column)
    if best is None or configuration.status != "ok":
        return None
    return compare(grid.metric, best, configuration)
