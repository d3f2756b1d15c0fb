"""One rule for "did it get faster or slower?", used by `tune` (is a candidate clearly faster),
a report against a baseline, host against host, and a configuration's history.

A change is real when the median moved by more than `min_change` (a fraction) *and* the repeats
do not overlap: the faster side's slowest run beats the slower side's fastest. Two settings that
do the same thing drew medians 10 % apart in two rounds on one quiet machine; their rounds
overlapped. With fewer than `min_runs` runs on a side nothing can be said, and the verdict says
so rather than flagging noise.
"""

from dataclasses import dataclass

from .metrics import Metric, Summary, speed_ratio

FASTER, SLOWER, SAME, TOO_FEW = "faster", "slower", "same", "too few runs"


@dataclass(frozen=True)
class Verdict:
    kind: str  # FASTER, SLOWER, SAME (within the rule) or TOO_FEW
    ratio: float  # how many times faster `new` ran than `old` (medians)
    low: float  # the ratio's range from the runs' extremes
    high: float
    runs: tuple  # (n new, n old)

    @property
    def changed(self):
        return self.kind in (FASTER, SLOWER)

    def text(self, min_runs=2):
        if self.kind == TOO_FEW:
            return f"needs ≥ {min_runs} runs each (has {self.runs[0]} and {self.runs[1]})"
        how = f"{self.ratio:.2f}× faster" if self.ratio >= 1 else f"{1 / self.ratio:.2f}× slower"
        return f"{self.kind}: {how}" if self.changed else f"same within noise ({how})"


def judge(metric: Metric, new, old, min_change, min_runs=2) -> Verdict:
    """The verdict on `new` against `old` (each a list of one configuration's values)."""
    new_s, old_s = Summary.of(new), Summary.of(old)
    if new_s is None or old_s is None:
        raise ValueError("a verdict needs a value on both sides")
    extremes_new = Summary(new_s.median, min(new), max(new), new_s.n, False)
    extremes_old = Summary(old_s.median, min(old), max(old), old_s.n, False)
    ratio, low, high = speed_ratio(metric, extremes_new, extremes_old)
    runs = (new_s.n, old_s.n)
    if min(runs) < min_runs:
        return Verdict(TOO_FEW, ratio, low, high, runs)
    if ratio > 1 + min_change and low > 1:
        return Verdict(FASTER, ratio, low, high, runs)
    if ratio < 1 / (1 + min_change) and high < 1:
        return Verdict(SLOWER, ratio, low, high, runs)
    return Verdict(SAME, ratio, low, high, runs)
