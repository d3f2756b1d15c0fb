"""Paired comparisons: two configurations measured in the same rounds of a sweep (each round
runs every configuration once, in a fresh random order: bench.run.rounds), compared round by
round, so that a slow spell of the host that lasts a round weighs on both sides alike.

For A against B, each round gives the log of the ratio of their figures. The estimate is the
Hodges-Lehmann median of the Walsh averages of those logs (the pseudo-median: robust to a
round a spell hit one side of), its interval the exact Wilcoxon signed-rank interval at
CONFIDENCE (Walsh averages at the ranks the signed-rank distribution gives; Hollander & Wolfe,
Nonparametric Statistical Methods, 3.2), both turned back into ratios. Six rounds are the
fewest whose exact interval reaches 95 % (five give 93.75 % at most): with fewer the verdict
says so. An order is claimed only when the interval clears the tie band on its side; else the
pair is a tie: `equivalent` when the interval lies inside the band, `undecided` when it
reaches past it (more rounds could still decide).

Also here: the distribution-free interval of one configuration's median (order statistics).
Pure arithmetic, no I/O: the sweep's adaptive rounds (run layer), the check and the report use
the same functions.
"""

import math
from dataclasses import dataclass
from functools import cache
from typing import Optional

CONFIDENCE = 0.95
TIE_BAND = 0.02  # an order is claimed only beyond 2 % (the config's rounds.tie_band)
MIN_ROUNDS = 6  # the fewest pairs whose exact signed-rank interval reaches 95 %

FASTER, SLOWER, TIE, TOO_FEW = "faster", "slower", "tie", "too few rounds"
EQUIVALENT, UNDECIDED = "equivalent", "undecided"


@cache
def _signed_rank_counts(n):
    """counts[t]: how many of the 2**n sign patterns give the signed-rank statistic t."""
    counts = [1] + [0] * (n * (n + 1) // 2)
    for k in range(1, n + 1):
        for t in range(len(counts) - 1, k - 1, -1):
            counts[t] += counts[t - k]
    return tuple(counts)


def _critical(n, confidence):
    """The largest c with P(T <= c) <= (1 - confidence) / 2 for the signed-rank statistic of
    n pairs, or None where even c = 0 is too likely (n too small for this confidence)."""
    if n > 60:  # the normal approximation, where the exact counts grow large
        mean, sd = n * (n + 1) / 4, math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
        z = _normal_quantile(1 - (1 - confidence) / 2)
        c = math.floor(mean - z * sd - 0.5)
        return c if c >= 0 else None
    counts = _signed_rank_counts(n)
    total, tail, cumulative, best = 2.0**n, (1 - confidence) / 2, 0, None
    for t, count in enumerate(counts):
        cumulative += count
        if cumulative / total > tail:
            break
        best = t
    return best


def _normal_quantile(p):
    """The standard normal quantile (Acklam's rational approximation, |error| < 1.2e-9)."""
    a = (-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.3577518672690,
         -30.66479806614716, 2.506628277459239)  # fmt: skip
    b = (-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972,
         -13.28068155288572)  # fmt: skip
    c = (-7.784894002430293e-03, -0.3223964580411365, -2.400758277161838, -2.549732539343734,
         4.374664141464968, 2.938163982698783)  # fmt: skip
    d = (7.784695709041462e-03, 0.3224671290700398, 2.445134137142996, 3.754408661907416)
    if p < 0.02425:
        q = math.sqrt(-2 * math.log(p))
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / (
            (((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1
        )
    if p > 1 - 0.02425:
        return -_normal_quantile(1 - p)
    q = p - 0.5
    r = q * q
    return (
        (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5])
        * q
        / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
    )


def walsh_averages(values):
    """(x_i + x_j) / 2 for every i <= j, sorted."""
    return sorted(
        (values[i] + values[j]) / 2 for i in range(len(values)) for j in range(i, len(values))
    )


def hodges_lehmann(values):
    """The median of the Walsh averages: the signed-rank test's estimate of the centre."""
    walsh = walsh_averages(values)
    middle = len(walsh) // 2
    return walsh[middle] if len(walsh) % 2 else (walsh[middle - 1] + walsh[middle]) / 2


def signed_rank_interval(values, confidence=CONFIDENCE):
    """(low, high, confidence reached) of the centre of `values` (their pseudo-median), or None
    where there are too few for `confidence`."""
    n = len(values)
    if n == 0:
        return None
    c = _critical(n, confidence)
    if c is None:
        return None
    walsh = walsh_averages(values)
    reached = 1 - 2 * sum(_signed_rank_counts(n)[: c + 1]) / 2.0**n if n <= 60 else confidence
    return walsh[c], walsh[len(walsh) - 1 - c], reached


@dataclass(frozen=True)
class Paired:
    """A against B from the rounds both ran in: how many times faster A ran (> 1: A faster),
    its interval, the rounds, and the verdict by the tie band."""

    ratio: float
    low: Optional[float]  # None: too few rounds for an interval
    high: Optional[float]
    rounds: int
    tie_band: float
    confidence: Optional[float]  # the exact interval's own confidence (>= CONFIDENCE)

    @property
    def verdict(self):
        """FASTER or SLOWER (the interval clears the band), TIE or TOO_FEW."""
        if self.low is None:
            return TOO_FEW
        if self.low > 1 + self.tie_band:
            return FASTER
        if self.high < 1 / (1 + self.tie_band):
            return SLOWER
        return TIE

    @property
    def tie_kind(self):
        """For a tie: EQUIVALENT (the interval lies inside the band) or UNDECIDED (it reaches
        past the band: more rounds could decide); None otherwise."""
        if self.verdict != TIE:
            return None
        inside = self.low >= 1 / (1 + self.tie_band) and self.high <= 1 + self.tie_band
        return EQUIVALENT if inside else UNDECIDED

    @property
    def decided(self):
        return self.verdict in (FASTER, SLOWER) or self.tie_kind == EQUIVALENT

    def text(self):
        """`1.12× (1.05–1.20, 8 rounds)`, `1.01× (6 rounds too few... )`."""
        if self.low is None:
            return (
                f"{self.ratio:.2f}× ({self.rounds} round{'s' if self.rounds != 1 else ''}: too few)"
            )
        return f"{self.ratio:.2f}× ({self.low:.2f}–{self.high:.2f}, {self.rounds} rounds)"


def paired(a_values, b_values, higher_is_better=True, tie_band=TIE_BAND, confidence=CONFIDENCE):
    """A against B from their figures in the same rounds (two equal-length lists, round by
    round; non-positive figures are not ratios and raise ValueError)."""
    if len(a_values) != len(b_values) or not a_values:
        raise ValueError("paired figures: one of A and one of B in each round")
    if min(a_values) <= 0 or min(b_values) <= 0:
        raise ValueError("paired figures must be positive")
    sign = 1 if higher_is_better else -1
    logs = [sign * (math.log(a) - math.log(b)) for a, b in zip(a_values, b_values)]
    centre = hodges_lehmann(logs)
    interval = signed_rank_interval(logs, confidence)
    if interval is None:
        return Paired(math.exp(centre), None, None, len(logs), tie_band, None)
    low, high, reached = interval
    return Paired(math.exp(centre), math.exp(low), math.exp(high), len(logs), tie_band, reached)


def median_interval(values, confidence=CONFIDENCE):
    """(low, high) of the median of `values` at `confidence` or better, from their order
    statistics (the binomial distribution of how many fall below the median), or None where
    there are too few values (fewer than six for 95 %)."""
    values = sorted(values)
    n = len(values)
    tail = (1 - confidence) / 2
    best = None
    cumulative = 0.0
    for k in range(n // 2):
        cumulative += math.comb(n, k) / 2.0**n
        if cumulative > tail:
            break
        best = k
    if best is None:
        return None
    return values[best], values[n - 1 - best]
