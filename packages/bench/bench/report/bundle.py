"""A bundle of results as a whole, beyond its configurations one by one (bench.report.fitness):

- its A/A controls: one configuration run twice a round under two names (twin=copy,
  bench.run.rounds); the pair must come out a tie, and its interval is the noise floor the
  bundle's other ratios stand on;
- the host's trend over the bundle: a host that grew slower from its first runs to its last
  (a burstable VM out of CPU credits, a throttled one) gets a host verdict, `host-throttled`,
  with the figures, instead of its configurations being called invalid one by one;
- its rounds cut short: a sweep's runs missing from rounds it planned;
- how decisive it is: per column, each configuration against the next by median, the share
  of such neighbouring pairs that got a verdict (an order, or a tie inside the band);
- two bundles made independently: every order both declare must agree (no flip).

Pure functions of Configurations and Results; `python -m bench check` prints them.
"""

import statistics
from dataclasses import dataclass
from typing import Optional

from . import quality, ratios
from .collection import Configuration, Grid, configuration_key

# a trend the host verdict calls throttling: the last third of the bundle's runs slower on the
# canary than the first third (by their medians) by more than the runs' own threshold
# (watch.max_canary_slowdown), or steal past its threshold in the last third where the first
# third had none
THIRD = 3  # runs a third needs before a trend is judged


def _without_twin(c: Configuration):
    return tuple(kv for kv in c.first.identity if kv[0] != "twin"), c.first.hardware


def _twin(c: Configuration):
    return dict(c.first.identity).get("twin", "null") != "null"


@dataclass(frozen=True)
class Control:
    """An A/A control: a configuration against itself under its second name."""

    original: Configuration
    copy: Configuration
    comparison: Optional[ratios.Comparison]

    @property
    def tie(self):
        """Whether the pair came out a tie (neither ran faster beyond the tie band)."""
        c = self.comparison
        return c is not None and c.ratio.paired is not None and c.verdict == ratios.TIE

    def text(self):
        c = self.comparison
        if c is None or c.ratio.paired is None:
            return (
                f"{self.original.row}, {self.original.task}: fewer than six rounds in common "
                f"with its A/A copy: not judged"
            )
        word = "a tie" if self.tie else f"NOT a tie ({c.verdict})"
        return (
            f"{self.original.row}, {self.original.task}: against itself {c.ratio.text()}: "
            f"{word} (the noise floor of this bundle's ratios)"
        )


def controls(grid: Grid):
    """[Control] of every A/A pair in the grid (by the grid's metric)."""
    originals = {_without_twin(c): c for c in grid.configurations if not _twin(c)}
    found = []
    for c in grid.configurations:
        if _twin(c) and _without_twin(c) in originals:
            original = originals[_without_twin(c)]
            comparison = ratios.compare(grid.metric, original, c)
            found.append(Control(original, c, comparison))
    return found


@dataclass(frozen=True)
class HostVerdict:
    kind: str  # host-throttled
    text: str


def host_verdict(runs) -> Optional[HostVerdict]:
    """`host-throttled` where the host grew slower over the bundle's runs (by their start):
    the median canary slowdown of the last third past the first third's by more than the
    runs' watch.max_canary_slowdown, or the
    last third's median steal past its threshold where the first third's was not; None
    otherwise, or where fewer than 3 * THIRD runs record the host."""
    watched = sorted(
        (r for r in runs if (r.result.get("host_state") or {}).get("canary") is not None),
        key=lambda r: r.result.get("started") or "",
    )
    if len(watched) < 3 * THIRD:
        return None
    third = len(watched) // 3
    first, last = watched[:third], watched[-third:]

    def median(rs, read):
        values = [v for v in (read(r.result["host_state"]) for r in rs) if v is not None]
        return statistics.median(values) if values else None

    def slowdown(state):
        return (state.get("canary") or {}).get("slowdown")

    def steal(state):
        return state.get("steal") if state.get("watched") else None

    before, after = median(first, slowdown), median(last, slowdown)
    steal_before, steal_after = median(first, steal), median(last, steal)
    thresholds = watched[0].result["host_state"].get("thresholds") or {}
    limit = thresholds.get("max_steal", 0.05)
    throttle = thresholds.get("max_canary_slowdown", 0.25)
    slower = before is not None and after is not None and after - before > throttle
    stolen = (
        steal_before is not None and steal_after is not None and steal_after > limit >= steal_before
    )
    if not (slower or stolen):
        return None
    figures = []
    if before is not None and after is not None:
        figures.append(f"the canary {before:+.0%} to {after:+.0%} against the host's reference")
    if steal_before is not None and steal_after is not None:
        figures.append(f"steal {steal_before:.0%} to {steal_after:.0%}")
    return HostVerdict(
        "host-throttled",
        f"the host grew slower over the bundle, from its first {third} runs to its last "
        f"{third}: {', '.join(figures)}; its figures are not comparable across the bundle "
        f"(a burstable VM out of CPU credits, or a throttled host): run it again on a steady "
        f"host",
    )


def rounds_cut_short(runs):
    """One line per sweep in rounds whose planned rounds did not all run every configuration:
    [text]. Nothing is lost: the runs that ran are judged; the line says what is missing."""
    sweeps = {}
    for r in runs:
        place = (r.result.get("config") or {}).get("round") or {}
        if r.round is None:
            continue
        entry = sweeps.setdefault(place["sweep"], {"of": 0, "rounds": {}})
        entry["of"] = max(entry["of"], place.get("of") or 0)
        entry["rounds"].setdefault(place["index"], set()).add(
            (r.identity, r.hardware, r.status in ("ok",) and not r.disturbed)
        )
    lines = []
    for sweep, entry in sweeps.items():
        configurations = {(i, h) for members in entry["rounds"].values() for i, h, _ in members}
        missing = []
        for index in range(entry["of"]):
            present = {(i, h) for i, h, _ in entry["rounds"].get(index, ())}
            if len(present) < len(configurations):
                missing.append(f"round {index + 1}: {len(present)} of {len(configurations)}")
        if missing:
            lines.append(
                f"sweep {sweep}: {len(missing)} of {entry['of']} rounds cut short ("
                + "; ".join(missing[:4])
                + ("; ..." if len(missing) > 4 else "")
                + " configurations): the rounds that ran are judged; resume the sweep "
                "(the same command) to finish them"
            )
    return lines


@dataclass(frozen=True)
class Neighbours:
    """Two configurations adjacent by median in one column, and their comparison."""

    faster: Configuration
    slower: Configuration
    comparison: ratios.Comparison

    @property
    def apart(self):
        """How far apart their medians lie: the larger over the smaller, minus one."""
        return self.comparison.ratio.ratio - 1 if self.comparison else 0.0

    @property
    def decided(self):
        c = self.comparison
        if c is None or c.verdict in (ratios.NO_INTERVAL, ratios.NOT_COMPARED):
            return False
        if c.ratio.paired is not None:
            return c.ratio.paired.decided
        return c.verdict in (ratios.FASTER, ratios.SLOWER)


def neighbours(grid: Grid):
    """[Neighbours] of every column: its ranked configurations by median (fastest first, the
    A/A copies left out), each against the next."""
    found = []
    for task, columns in grid.columns.items():
        for column in columns:
            ranked = []
            for row in grid.rows:
                c = grid.cells.get((row, task, column))
                summary = c.summary(grid.metric) if c is not None and c.status == "ok" else None
                if summary is not None and quality.of(c).ranked and not _twin(c):
                    ranked.append((summary.median, c))
            ranked.sort(key=lambda mc: mc[0], reverse=grid.metric.higher_is_better)
            for (_, a), (_, b) in zip(ranked, ranked[1:]):
                found.append(Neighbours(a, b, ratios.compare(grid.metric, a, b)))
    return found


def decisiveness(pairs, apart=0.10):
    """(decided, all, decided of those apart, those apart): of neighbouring pairs, and of the
    pairs whose medians lie more than `apart` apart."""
    wide = [p for p in pairs if p.apart > apart]
    return (
        sum(p.decided for p in pairs),
        len(pairs),
        sum(p.decided for p in wide),
        len(wide),
    )


def orders(grid: Grid):
    """{(configuration key, configuration key): +1 (the first faster) or -1} of every pair of
    one column whose comparison declares an order."""
    found = {}
    for task, columns in grid.columns.items():
        for column in columns:
            cells = [
                grid.cells[(row, task, column)]
                for row in grid.rows
                if (row, task, column) in grid.cells
                and grid.cells[(row, task, column)].status == "ok"
            ]
            for i, a in enumerate(cells):
                for b in cells[i + 1 :]:
                    c = ratios.compare(grid.metric, a, b)
                    if c is not None and c.verdict in (ratios.FASTER, ratios.SLOWER):
                        key = (configuration_key(a.first), configuration_key(b.first))
                        found[key] = 1 if c.verdict == ratios.FASTER else -1
    return found


@dataclass(frozen=True)
class Agreement:
    both: int  # pairs both bundles declare an order for
    flips: list  # [(a, b)] of those they order the other way round
    only_one: int  # pairs one bundle orders and the other calls a tie (or does not have)


def agreement(first: Grid, second: Grid) -> Agreement:
    """Whether two bundles agree on every order both declare (the rule is honest when two
    bundles made independently never flip an order)."""
    a, b = orders(first), orders(second)
    reversed_b = {(y, x): -v for (x, y), v in b.items()}
    b_all = {**b, **reversed_b}
    both = [k for k in a if k in b_all]
    flips = [k for k in both if a[k] != b_all[k]]
    only_one = len(set(a) - set(both)) + len(set(b) - {(y, x) for x, y in both} - set(both))
    return Agreement(len(both), flips, only_one)


def label(key, grid: Grid):
    """A configuration key's row, task and column in a grid, for a line."""
    for c in grid.configurations:
        if c.key == key:
            return f"{c.row}, {c.task} {c.column}".strip()
    return str(key)[:60]
