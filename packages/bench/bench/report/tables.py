"""The report's text: DeepLearningFrameworks' markdown table (framework rows; per task one
column per hardware/precision found, each with its runs' median, spread and count, the test
accuracy beside it, and how many times slower than the task column's fastest row with its
interval), the hyperfine-style sentences that compare them, the time-to-target table and a CSV
row per run.

A configuration below its quality target or at chance (bench.report.quality) is never the
fastest and never "faster": its × says why instead. Every ratio carries its 95 % interval
(bench.report.ratios); one whose interval holds 1 is "no difference shown".
"""

from . import fitness, quality, ratios
from .collection import REFUSED, Grid, steady_state, uniform_text

TITLES = {"cnn": "CNN", "resnet50": "ResNet-50", "rnn": "RNN", "densenet": "DenseNet-121"}
FAILED, INVALID, UNSUPPORTED, MISSING = "failed", "invalid", "—", ""
NOT_OK = {
    "failed": FAILED,
    "invalid": INVALID,
    "not_installed": "not_installed",
    "interrupted": "interrupted",
}
NO_STEADY = "†"  # a training cell under a steady-state heading whose runs had one epoch
TOO_SPREAD = "‡"  # a cell whose median is more uncertain than `bench check` lets a bundle rank
NOT_REACHED = "not reached"


def _units(grid: Grid):
    kinds = {c.first.kind for c in grid.configurations}
    m = grid.metric
    if kinds == {"inference"}:
        return m.unit("inference")
    if kinds == {"train"} or m.name == "time_to_target":
        return m.unit("train")
    return f"{m.unit('train')} for training, {m.unit('inference')} for ResNet-50"


def marked(configuration, metric) -> bool:
    """A steady-state cell whose training runs measured no steady state (one epoch)."""
    return metric.name == "steady" and any(not steady_state(r) for r in configuration.ok)


def too_spread(configuration, metric) -> bool:
    """Its runs break `bench check`'s interval rule (bench.report.fitness) on this metric: the
    median's 95 % interval too wide; a time to the target, which moves by whole epochs, is not
    held to it."""
    if metric.name == "time_to_target" or configuration.status != "ok":
        return False
    return bool(configuration.values(metric)) and (
        fitness.interval_broken(configuration, metric) is not None
    )


def legend(grid: Grid) -> str:
    """What the table's cells mean: only what this table shows."""
    shown = grid.ordered()
    ok = [c for c in shown if c.status == "ok"]
    return (
        _cells_text(grid, ok)
        + _marks_text(grid, ok)
        + _relative_text(grid, ok)
        + _statuses_text(grid, shown)
    )


def _cells_text(grid, ok):
    """What a cell's figures are."""
    m = grid.metric
    counts = [s.n for s in (c.summary(m) for c in ok) if s is not None]
    better = "higher" if m.higher_is_better else "lower"
    text = f"Cells: {m.title} ({_units(grid)}; {better} is better), the median of the runs"
    if any(n > 1 for n in counts):
        spread = "min–max" + (
            "; the interquartile range from 5 runs" if any(n >= 5 for n in counts) else ""
        )
        text += f" with its spread ({spread}) and their number"
    else:
        text += " and their number"
    if any(c.first.kind == "train" for c in ok):
        text += ", then the test accuracy"
        if any(c.task == "densenet" for c in ok):
            text += " (DenseNet-121: the mean ROC-AUC)"
    text += "."
    return text


def _marks_text(grid, ok):
    """The marks a cell may carry: not reached, no steady state, too uncertain to rank."""
    m, text = grid.metric, ""
    if m.name == "time_to_target" and any(
        len(c.values(m)) < len(c.ok) for c in ok
    ):  # a run that did not reach it
        text += (
            f" {NOT_REACHED}: no evaluation of the run reached its quality target; "
            f"(k of n not reached): the figure is of the runs that did."
        )
    if any(marked(c, m) for c in ok):
        text += (
            f" {NO_STEADY}: no steady state (one epoch each): the figure includes the "
            f"first epoch's warm-up."
        )
    if any(too_spread(c, m) for c in ok):
        text += (
            f" {TOO_SPREAD}: its median is less certain than `python -m bench check` lets a "
            f"bundle rank (the 95 % interval of the median of its undisturbed runs more than "
            f"{fitness.MAX_INTERVAL:.0%} wide)."
        )
    return text


def _relative_text(grid, ok):
    """The ×, its interval, and the cells not ranked for their quality."""
    text = ""
    statuses = [quality.of(c) for c in ok]
    relatives = [found for c in ok if (found := _relative(grid, c)[1])]
    intervals = any(found.ratio.has_interval for found in relatives)
    paired = any(found.ratio.paired is not None for found in relatives)
    text += (
        " ×: how many times slower than the column's fastest row (1.00: the fastest)"
        + (
            ", with its 95 % interval ("
            + (
                "from the rounds both ran in: the Hodges-Lehmann ratio and its signed-rank "
                "interval; "
                if paired
                else ""
            )
            + "a seeded bootstrap over the repeats"
            + (" where they share fewer than six rounds" if paired else "")
            + "; none where a side has one run)"
            if intervals
            else ""
        )
        + "."
    )
    unranked = sorted({q.short for q in statuses if not q.ranked})
    if unranked:
        text += (
            f" {' / '.join(unranked)}: not ranked, for its quality (the test accuracy "
            f"did not reach the task's target, or is no better than a uniform guess)."
        )
    return text


def _statuses_text(grid, shown):
    """The statuses of the cells that did not run ok, and the blanks."""
    text = ""
    present = {c.status for c in shown}
    said = {
        "failed": "failed: the run failed",
        "invalid": "invalid: its loss became NaN/inf or diverged",
        "interrupted": "interrupted: a signal cut it short",
        "not_installed": "not_installed: its environment is not built on that host",
        "unsupported": f"{UNSUPPORTED}: unsupported",
    }
    notes = [said[s] for s in said if s in present]
    if any(
        (row, task, column) not in grid.cells
        for row in grid.rows
        for task, columns in grid.columns.items()
        for column in columns
    ):
        refused = [s for s in REFUSED if grid.left_out.get(s)]
        notes.append(
            "blank: not run"
            + (
                f", or refused before running ({' or '.join(refused)}; `--status all` shows them)"
                if refused
                else ""
            )
        )
    if notes:
        text += " " + "; ".join(notes) + "."
    return text


def number(x):
    """Three significant figures or so, as DeepLearningFrameworks' table: 169, 21.3, 7.70."""
    if x is None:
        return ""
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.1f}" if abs(x) >= 10 else f"{x:.2f}"


def percent(x):
    return f"{100 * x:.1f} %"


def cell(configuration, metric):
    """`324 (318–330, n=3) · 77.2 %`, `failed`, `not_installed`, `—` or blank."""
    if configuration is None:
        return MISSING
    status = configuration.status
    if status != "ok":
        return NOT_OK.get(status, UNSUPPORTED)
    summary = configuration.summary(metric)
    if summary:
        text = summary.text(number) + (NO_STEADY if marked(configuration, metric) else "")
        text += TOO_SPREAD if too_spread(configuration, metric) else ""
    else:
        text = NOT_REACHED if metric.name == "time_to_target" else "(no figure)"
    if configuration.accuracy is not None:
        text += f" · {percent(configuration.accuracy)}"
    if metric.name == "time_to_target" and summary:
        missed = len(configuration.ok) - summary.n
        if missed:
            text += f" ({missed} of {len(configuration.ok)} {NOT_REACHED})"
    if configuration.failed:
        text += f" ({len(configuration.failed)} failed)"
    if configuration.invalid:
        text += f" ({len(configuration.invalid)} invalid)"
    return text


def fastest(grid: Grid, task, column):
    """The (row, summary) of the column's fastest configuration ranked by quality, or None."""
    best = ratios.fastest(grid, task, column)
    return None if best is None else (best.row, best.summary(grid.metric))


def _relative(grid: Grid, configuration):
    """(text of the × cell, the Comparison behind it or None)."""
    if configuration is None or configuration.status != "ok":
        return "", None
    q = quality.of(configuration)
    if not q.ranked:
        return q.short, None
    found = ratios.against_fastest(grid, configuration)
    if found is None:
        return "", None
    if found.a is configuration:
        return "1.00", None
    r = found.ratio
    return (
        f"{r.ratio:.2f} ({r.low:.2f}–{r.high:.2f})" if r.has_interval else f"{r.ratio:.2f}"
    ), found


def relative(grid: Grid, task, column, row):
    """How many times slower than the column's fastest ranked row, as text with its interval:
    `1.12 (1.05–1.20)`, `1.12` (a side with one run), `1.00` for the fastest; `below target`
    or `at chance` for a configuration not ranked."""
    return _relative(grid, grid.cells.get((row, task, column)))[0]


def relative_comparison(grid: Grid, task, column, row):
    """The Comparison behind a × cell (the fastest against this row), or None (the fastest
    itself, a configuration not ranked, no figure)."""
    return _relative(grid, grid.cells.get((row, task, column)))[1]


def title(task):
    return TITLES.get(task, task)


def heading(task, column):
    """`CNN`, `CNN fp32`: the task and what tells its columns apart."""
    return f"{title(task)} {column}".strip()


def _row(cells):
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def markdown_table(header, rows):
    lines = [_row(header), "|" + "---|" * len(header)]
    return "\n".join(lines + [_row(r) for r in rows])


def table(grid: Grid, extra=None):
    """(header, rows) of DeepLearningFrameworks' layout: per task column the cell and its ×;
    `extra(task)` -> [(heading, row -> text)] adds columns after a task's own (the 2018
    figures)."""
    header, getters = ["framework"], []
    for task, columns in grid.columns.items():
        for column in columns:
            header += [heading(task, column), f"{heading(task, column)} ×"]
            getters.append(
                lambda row, t=task, c=column: cell(grid.cells.get((row, t, c)), grid.metric)
            )
            getters.append(lambda row, t=task, c=column: relative(grid, t, c, row))
        for name, get in extra(task) if extra else ():
            header.append(name)
            getters.append(get)
    return header, [[row] + [get(row) for get in getters] for row in grid.rows]


def shared_line(grid: Grid) -> str:
    shared = uniform_text(grid.uniform)
    return f" All runs: {shared}." if shared else ""


def markdown(grid: Grid, extra=None) -> str:
    """The legend and the table (bench.report.reference_2018 passes the 2018 columns as
    `extra`)."""
    return legend(grid) + shared_line(grid) + "\n\n" + markdown_table(*table(grid, extra)) + "\n"


def comparisons(grid: Grid):
    """Per task column, hyperfine's sentence: "Keras ran 1.12× (1.05–1.20) faster than
    PyTorch, 1.52× (1.45–1.60) faster than Gluon on CNN; no difference shown between Keras and
    JAX (1.02×, 0.97–1.08); not compared: Chainer (below target)". The ranges are 95 %
    bootstrap intervals over the repeats. [(task, column, sentence)]."""
    found = []
    for task, columns in grid.columns.items():
        for column in columns:
            best = ratios.fastest(grid, task, column)
            if best is None:
                continue
            faster, same, tied, unranked = [], [], [], []
            others = [
                grid.cells[row, task, column]
                for row in grid.rows
                if (row, task, column) in grid.cells
            ]
            others = [c for c in others if c is not best and c.status == "ok"]
            for c in others:
                q = quality.of(c)
                if not q.ranked:
                    unranked.append(f"{c.row} ({q.short})")
            compared = [
                (c, ratios.compare(grid.metric, best, c))
                for c in others
                if quality.of(c).ranked and c.summary(grid.metric)
            ]
            compared.sort(key=lambda cc: cc[1].ratio.ratio)
            for c, comparison in compared:
                r = comparison.ratio
                if comparison.verdict == ratios.NO_DIFFERENCE:
                    same.append(f"{c.row} ({r.ratio:.2f}×, {r.interval_text()})")
                elif comparison.verdict == ratios.TIE:
                    tied.append(f"{c.row} ({r.ratio:.2f}×, {r.interval_text()})")
                elif comparison.verdict == ratios.NO_INTERVAL:
                    faster.append((f"{r.ratio:.2f}× faster than {c.row}", False))
                else:
                    faster.append((f"{r.text()} faster than {c.row}", True))
            if not (faster or same or tied or unranked):
                continue
            where = heading(task, column)
            parts = []
            if faster:
                bare = not any(interval for _, interval in faster)  # one run a side, each
                phrases = [
                    text + ("" if interval or bare else " (n=1: no interval)")
                    for text, interval in faster
                ]
                parts.append(
                    f"{best.row} ran "
                    + ", ".join(phrases)
                    + f" on {where}"
                    + (" (n=1: no interval)" if bare else "")
                )
            if same:
                parts.append(
                    f"no difference shown between {best.row} and "
                    + ", ".join(same)
                    + ("" if faster else f" on {where}")
                )
            if tied:
                band = max(best.tie_band, *(c.tie_band for c in others)) if others else 0
                parts.append(
                    f"a tie (within ±{band:.0%}, or not decided) between {best.row} and "
                    + ", ".join(tied)
                    + ("" if faster or same else f" on {where}")
                )
            if unranked:
                parts.append(
                    "not compared: "
                    + ", ".join(unranked)
                    + ("" if faster or same or tied else f" on {where}")
                )
            sentence = "; ".join(parts)
            found.append((task, column, sentence[0].upper() + sentence[1:]))
    return found


def comparisons_markdown(grid: Grid, found=None) -> str:
    """The sentences under the table (`found`: comparisons(grid), where already made)."""
    found = comparisons(grid) if found is None else found
    if not found:
        return ""
    return (
        f"By {grid.metric.title}; each range is the ratio's 95 % interval from a seeded "
        f"bootstrap over the repeats (n=1: none), and a ratio whose interval holds 1 is "
        f"no difference shown:\n\n" + "\n".join(f"- {sentence}." for _, _, sentence in found) + "\n"
    )


def has_targets(runs) -> bool:
    """Whether any ok training run recorded a quality target (a time-to-target table)."""
    return any(
        r.kind == "train" and r.status == "ok" and quality.target_of(r) is not None for r in runs
    )


def time_to_target_grid(grid: Grid):
    """The same runs' training tasks by time to the quality target (None: no run has a
    target, or the grid already shows it)."""
    if grid.metric.name == "time_to_target" or not has_targets(grid.runs):
        return None
    return Grid(
        [r for r in grid.runs if r.kind == "train"],
        by_host=grid.by_host,
        metric_name="time_to_target",
    )


def time_to_target_markdown(grid: Grid, ttt=None) -> str:
    """The time-to-target table beside the throughput table, or "" (`ttt`: its grid, where
    already made)."""
    ttt = time_to_target_grid(grid) if ttt is None else ttt
    if ttt is None:
        return ""
    targets = sorted(
        {
            (title(r.task), r.data, quality.target_of(r))
            for r in ttt.runs
            if r.status == "ok" and quality.target_of(r) is not None
        }
    )
    declared = "; ".join(f"{t} {percent(v)} test accuracy ({d} data)" for t, d, v in targets)
    return (
        f"Time to the quality target (targets: {declared}). "
        + legend(ttt)
        + shared_line(ttt)
        + "\n\n"
        + markdown_table(*table(ttt))
        + "\n"
    )
