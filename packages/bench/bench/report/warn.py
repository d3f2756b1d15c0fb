"""The report's warnings, one line each, below its table (and on the page): what a reader must
know before trusting a cell or a ratio.

- spread: a configuration whose runs lie more than MAX_SPREAD times apart (its slowest
  against its fastest, by the table's metric): a busy machine or an unsteady run, and a ratio
  that wide says little (several such: one line, the widest named first);
- n = 1: configurations that ran once (one line for all of them): their ratios have no
  interval;
- quality: a configuration below its quality target or at chance (bench.report.quality), one
  line each: it is not ranked;
- fit to rank: configurations that break one of `python -m bench check`'s rules that no other
  warning or mark says (a median whose 95 % interval is wider than 10 %, marked ‡ in the
  table; a tree with uncommitted changes; an environment off its lock; fewer undisturbed runs
  than six), one line a rule;
- disturbed: runs the host disturbed (bench.run.hostwatch), left out of the statistics, one
  line for all of them with the first reason;
- steady state: training runs of one epoch under a steady-state heading (their figure
  includes the warm-up), or the note that the table fell back to the throughput over every
  epoch because no run measured a steady state.
"""

from . import fitness, quality
from .collection import Grid
from .tables import NO_STEADY, TOO_SPREAD, heading, marked, number, too_spread

MAX_SPREAD = 1.5  # slowest over fastest run of one configuration beyond which the report warns
NAMED = 4  # configurations named in a grouped warning before "and k more"


def _label(c):
    return f"{c.row}, {heading(c.task, c.column)}"


def _names(configurations, label=_label):
    names = [label(c) for c in configurations[:NAMED]]
    more = len(configurations) - len(names)
    return "; ".join(names) + (f"; and {more} more" if more > 0 else "")


def warnings(grid: Grid):
    """The warnings of a report's table, each one line."""
    metric = grid.metric
    ok = [c for c in grid.ordered() if c.status == "ok"]
    lines = []
    if grid.metric_name == "auto" and metric.name == "throughput":
        stopped = any(r.result.get("stopped_at_target") for r in grid.runs)
        lines.append(
            "No training run measured a steady state (one epoch each): the cells show "
            "the throughput over every epoch, its first epoch's warm-up included; "
            + (
                "the runs stopped at their quality target (task.stop_at_target=true), "
                "and the time to the target ranks them."
                if stopped
                else "run two epochs or more (`preset.epochs=2`) for a steady state."
            )
        )
    one_epoch = [c for c in ok if marked(c, metric)]
    if one_epoch:
        lines.append(
            f"No steady state in {len(one_epoch)} of {len(ok)} configurations under "
            f"this steady-state heading ({_names(one_epoch)}): they ran one epoch, "
            f"and their figures ({NO_STEADY}) include its warm-up; `--metric "
            f"throughput` compares every run over every epoch."
        )
    for c in ok:
        q = quality.of(c)
        if not q.ranked:
            lines.append(f"{_label(c)}: {q.reason()}; not ranked.")
    lines += wide(ok, metric)
    lines += disturbed(ok)
    lines += unfit(grid, ok)
    single = [c for c in ok if len(c.values(metric)) == 1]
    if single:
        lines.append(
            f"n = 1: {len(single)} of {len(ok)} configurations ran once "
            f"({_names(single)}): their ratios have no interval; repeat them "
            f"(`-m seed=0,1,2`)."
        )
    return lines


def wide(ok, metric):
    """The configurations whose runs lie more than MAX_SPREAD times apart: one line each where
    one is, one line for all where several are (a noisy machine's table would otherwise be
    mostly warnings)."""
    found = []  # (configuration, its runs' values)
    for c in ok:
        values = c.values(metric)
        if len(values) > 1 and min(values) > 0 and max(values) / min(values) > MAX_SPREAD:
            found.append((c, values))
    if not found:
        return []
    if len(found) == 1:
        ((c, values),) = found
        low, high = min(values), max(values)
        return [
            f"{_label(c)}: its {len(values)} runs lie {high / low:.2f}× apart "
            f"({number(low)} to {number(high)} {metric.unit(c.first.kind)}), beyond "
            f"{MAX_SPREAD:g}×: a busy machine or an unsteady run; its ratios say little."
        ]
    widest = sorted(found, key=lambda f: max(f[1]) / min(f[1]), reverse=True)
    named = _names(widest, lambda f: f"{_label(f[0])} {max(f[1]) / min(f[1]):.2f}×")
    return [
        f"{len(found)} of {len(ok)} configurations' runs lie more than {MAX_SPREAD:g}× apart "
        f"(slowest to fastest), a busy machine or unsteady runs; their ratios say little: "
        f"{named}."
    ]


def disturbed(ok):
    """One line for the runs the host disturbed: how many, in which configurations, and the
    first one's reasons; they are out of the statistics."""
    found = [(c, r) for c in ok for r in c.disturbed]
    if not found:
        return []
    configurations = list({id(c): c for c, _ in found}.values())
    reasons = "; ".join(found[0][1].host_reasons) or "flagged"
    return [
        f"{len(found)} run{'s' if len(found) > 1 else ''} disturbed by the host, kept but left "
        f"out of the statistics ({_names(configurations)}; e.g. {reasons})."
    ]


# the check's rules a warning line here says; the others show elsewhere (status in the cell,
# steady state as †, the quality target in the quality lines, one run in the n = 1 line)
UNFIT_SAID = ("commit", "lock", "undisturbed", "interval")


def unfit(grid: Grid, ok):
    """One line per `bench check` rule (bench.report.fitness) that a configuration in the table
    breaks: the table ranks them, the check would not."""
    broken = {}
    for c in ok:
        for name, _ in fitness.judge(c, grid.metric).broken:
            if name == "interval" and not too_spread(c, grid.metric):
                continue  # a time to the target moves by whole epochs
            if name == "undisturbed" and len(c.runs) < 2:
                continue  # the n = 1 line
            if name in UNFIT_SAID:
                broken.setdefault(name, []).append(c)
    why = {
        "commit": "their runs' code commit is unknown or the tree had uncommitted changes",
        "lock": "their environments were not built from a lock, or drifted from it",
        "undisturbed": f"fewer than {fitness.MIN_RUNS} runs the host did not disturb",
        "interval": f"their median's 95 % interval is more than {fitness.MAX_INTERVAL:.0%} "
        f"wide ({TOO_SPREAD} in the table)",
    }
    return [
        f"Not fit to rank by `python -m bench check` ({name}: {why[name]}): {_names(broken[name])}."
        for name in UNFIT_SAID
        if name in broken
    ]


def markdown(lines) -> str:
    """`Warning: ...` for one, a list under `Warnings:` for more."""
    if not lines:
        return ""
    if len(lines) == 1:
        return f"Warning: {lines[0]}\n"
    return "Warnings:\n\n" + "\n".join(f"- {line}" for line in lines) + "\n"
