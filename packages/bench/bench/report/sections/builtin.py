"""The report's built-in sections, in the order report.md, report.json and the page show
them. Each is glue: the comparison itself lives in its own module (bench.report.axes,
baseline, history, ...), and the section says what of it each output shows."""

from .. import (
    agreement,
    axes,
    baseline,
    costs,
    history,
    host_comparison,
    looks,
    reference_2018,
    scaling,
    tables,
)
from ..collection import Grid, collect
from .base import Section


def _sentences(found):
    """report.json's records of tables.comparisons' (task, column, sentence)."""
    return [{"task": t, "column": c, "sentence": s} for t, c, s in found]


def _ratio(comparison):
    if comparison is None:
        return None
    r = comparison.ratio
    return {"ratio": r.ratio, "low": r.low, "high": r.high, "verdict": comparison.verdict}


def _verdict(v):
    return {"verdict": v.kind, "ratio": v.ratio, "low": v.low, "high": v.high}


class Comparisons(Section):
    """The sentences under the main table: every ordered pair a column's intervals decide."""

    key, heading = "comparisons", "Compared"

    def find(self, context):
        return tables.comparisons(context.grid)  # [] still a key of report.json

    def markdown(self, found, context):
        return tables.comparisons_markdown(context.grid, found)

    def data(self, found, context):
        return _sentences(found)

    def table(self, found, context):
        sentences = [s for _, _, s in found]
        sentences += [f"By time to target: {s}" for _, _, s in context.to_target_comparisons]
        if not sentences:
            return None
        return (
            f"By {context.metric.title}; each range is the ratio's 95 % interval (paired by "
            "rounds where the runs share six or more, a seeded bootstrap over the repeats "
            "otherwise; n=1: none), and a ratio whose interval holds 1 is no difference shown. "
            "A configuration below its quality target or at chance is not compared.",
            [],
            [],
            sentences,
        )


class TimeToTarget(Section):
    """The time-to-target table beside the main one, where training runs have targets."""

    key, heading = "time_to_target", "Time to the quality target"

    def find(self, context):
        return context.to_target

    def markdown(self, found, context):
        return tables.time_to_target_markdown(context.grid, found)

    def data(self, found, context):
        from ..document import cells_of

        return {"cells": cells_of(found), "comparisons": _sentences(context.to_target_comparisons)}

    def html(self, found, context):
        from ..site import content, render

        return render.results_section(
            content.results_table(found),
            len(found.runs),
            found.metric,
            tables.legend(found),
            self.anchor,
            self.heading,
        )


class Settings(Section):
    """Each setting (precision=bf16, an option) against its framework's declared baseline."""

    key, heading = "settings", "Settings within a framework"

    def find(self, context):
        return axes.pairs(context.grid) or None

    def markdown(self, found, context):
        return axes.markdown(found, context.metric)

    def data(self, found, context):
        return [
            {
                "framework": a.configuration.first.framework,
                "row": a.configuration.row,
                "task": a.configuration.task,
                "column": a.configuration.column,
                "axis": a.axis,
                "setting": a.setting,
                "against": a.baseline_setting,
                "speed": _ratio(a.speed),
                "time_to_target": _ratio(a.to_target),
                "verdict": a.verdict(),
            }
            for a in found
        ]

    def table(self, found, context):
        return (
            "Each setting against the declared baseline (precision fp32, tuned=false, an "
            f"option's default), by {context.metric.title} and by the time to the quality "
            "target, with the ratio's 95 % interval.",
            axes.HEADER,
            axes.rows(found, context.metric),
            [],
        )


class Reference2018(Section):
    """DeepLearningFrameworks' 2018 figures, with --reference."""

    key, heading = "reference_2018", "The 2018 figures"
    anchor = "reference"

    def find(self, context):
        reference = context.reference
        return None if reference is None else reference_2018.beside(context.grid, reference)

    def markdown(self, found, context):
        return reference_2018.markdown_section(context.grid, context.reference).lstrip("\n")

    def data(self, found, context):
        return {"hardware": context.reference.hardware, "rows": found}

    def table(self, found, context):
        rows = [
            [
                r["framework"],
                tables.title(r["task"]),
                r["gpu"],
                f"{r['seconds_2018']:g} s"
                if r["not_like_for_like"] is None
                else f"{1000 * r['per_example_2018']:.3g} ms per example (2018, first epoch "
                "included)",
                r["here"]
                if r["not_like_for_like"] is None
                else f"not like for like: {r['not_like_for_like']}",
            ]
            for r in found
        ]
        return (
            f"DeepLearningFrameworks' published figures, {context.reference.hardware}: beside "
            "full runs' total times; otherwise per example, labelled.",
            ["framework", "task", "2018 GPU", "2018", "here"],
            rows,
            [],
        )


class Hosts(Section):
    """The same configuration on two hosts."""

    key, heading = "hosts", "Host against host"

    def find(self, context):
        options = context.options
        return host_comparison.pairs(context.grid, options.min_change, options.min_runs) or None

    def markdown(self, found, context):
        return host_comparison.markdown(found, context.metric, context.options.min_runs)

    def data(self, found, context):
        return [
            {
                "task": a.task,
                "framework": a.first.framework,
                "faster": [a.first.hostname, a.first.hardware],
                "slower": [b.first.hostname, b.first.hardware],
                **_verdict(v),
            }
            for a, b, v in found
        ]

    def table(self, found, context):
        return (
            f"The same configuration on two hosts, by {context.metric.title}.",
            host_comparison.HEADER,
            host_comparison.rows(found, context.options.min_runs),
            [],
        )


class Scaling(Section):
    """Data-parallel runs on N devices against the same configuration on one."""

    key, heading = "scaling", "Data-parallel scaling"

    def find(self, context):
        return scaling.pairs(context.grid) or None

    def markdown(self, found, context):
        return scaling.markdown(found)

    def data(self, found, context):
        return [
            {
                "framework": s.configuration.first.framework,
                "row": s.configuration.row,
                "task": s.configuration.task,
                "column": s.configuration.column,
                "devices": s.devices,
                "throughput": scaling.throughput(s.configuration),
                "single_device_throughput": scaling.throughput(s.single),
                "speedup": s.speedup,
                "efficiency": s.efficiency,
            }
            for s in found
        ]

    def table(self, found, context):
        return (scaling.INTRO, scaling.HEADER, scaling.rows(found), [])


class Agreement(Section):
    """Where training runs of two seeds or more meet: the frameworks' accuracy and final loss
    against the seed noise."""

    key, heading = "agreement", "Agreement across frameworks"

    def find(self, context):
        return agreement.groups(context.grid) or None

    def markdown(self, found, context):
        return agreement.markdown(found, shared=context.grid.uniform)

    def data(self, found, context):
        return [
            {
                "task": g.task,
                "column": g.column,
                "init": g.init,
                "across_frameworks": {m: g.across(m) for m in agreement.METRICS},
                "seed_noise": {m: g.seed_noise(m) for m in agreement.METRICS},
                "frameworks": [
                    {
                        "row": e.row,
                        "seeds": e.seeds,
                        "not_ok": e.not_ok,
                        "mean": {m: e.mean(m) for m in agreement.METRICS},
                        "range": {m: list(e.range(m)) for m in agreement.METRICS},
                        "outside": {m: e.outside[m] for m in agreement.METRICS if m in e.outside},
                    }
                    for e in g.entries
                ],
            }
            for g in found
        ]

    def table(self, found, context):
        return (
            agreement.LEGEND,
            agreement.SUMMARY_HEADER,
            [agreement.summary_row(g) for g in found],
            [],
        )

    def write(self, found, context, directory):
        agreement.write_csv(found, directory / "agreement.csv")


class Costs(Section):
    """Where the runs' wall time went."""

    key, heading = "costs", "Where the time went"

    def find(self, context):
        found, totals = costs.rows(context.grid)
        return (found, totals) if found else None

    def markdown(self, found, context):
        return costs.markdown(context.grid)

    def data(self, found, context):
        rows, (timed, wall) = found
        return {
            "timed_s": timed,
            "wall_s": wall,
            "frameworks": [
                {
                    "framework": row,
                    "runs": n,
                    "median_wall_s": median_wall,
                    "timed_share": share,
                    "largest_fixed_costs": [
                        {"phase": name, "seconds": s, "share": part} for name, s, part in named
                    ],
                }
                for row, n, median_wall, share, named in rows
            ],
        }

    def table(self, found, context):
        rows, (timed, wall) = found
        return (
            f"{timed / wall:.0%} of the runs' wall time in timed windows ({timed:.0f} s of "
            f"{wall:.0f} s); each framework's median run and its largest fixed costs.",
            costs.HEADER,
            costs.table_rows(rows),
            [],
        )


class Baseline(Section):
    """These runs against --baseline's."""

    key, heading = "baseline", "Against the baseline"

    def find(self, context):
        options = context.options
        if not options.baseline:
            return None
        old = collect(options.baseline, every=options.every_status)
        if not old:
            raise ValueError(f"no result.json found in the baseline {' '.join(options.baseline)}")
        grid = context.grid
        return baseline.compare(
            grid,
            Grid(old, by_host=grid.by_host, metric_name=grid.metric.name),
            options.min_change,
            options.accuracy_drop,
            options.min_runs,
        )

    def markdown(self, found, context):
        o = context.options
        return baseline.markdown(found, context.metric, o.min_change, o.accuracy_drop, o.min_runs)

    def data(self, found, context):
        return [_finding(f) for f in found]

    def table(self, found, context):
        flagged = sum(f.flagged for f in found)
        return (
            f"{flagged} flagged: slower or less accurate beyond the threshold with no overlap "
            "of the runs, or no longer ok; too few runs are said, not flagged.",
            baseline.HEADER,
            baseline.rows(found, context.metric, _flagged_page),
            [],
        )


def _flagged_page(f):
    if f.baseline is not None and f.current is not None:
        return f"{f.verdict.upper()} ({baseline.packages_text(f)})"
    return f.verdict.upper()


def _finding(f):
    found = {
        "row": f.row,
        "task": f.task,
        "column": f.column,
        "verdict": f.verdict,
        "flagged": f.flagged,
        "accuracy_change": f.accuracy_change,
    }
    if f.speed is not None:
        found["speed"] = _verdict(f.speed)
    if f.flagged and f.baseline is not None and f.current is not None:
        found["packages_changed"] = f.packages  # None: a side records no environment
    return found


class History(Section):
    """Each configuration over its commits, with --history."""

    key, heading = "history", "History"

    def find(self, context):
        options = context.options
        if not options.history:
            return None
        return history.series(context.grid, options.min_change, options.min_runs)

    def markdown(self, found, context):
        return history.markdown(found, context.metric, context.options.min_runs)

    def data(self, found, context):
        return [
            {
                "framework": s.row,
                "task": s.task,
                "column": s.column,
                "points": [
                    {
                        "commit": p.commit,
                        "date": p.date,
                        "median": p.summary.median if p.summary else None,
                        "low": p.summary.low if p.summary else None,
                        "high": p.summary.high if p.summary else None,
                        "n": p.summary.n if p.summary else 0,
                        **({"change": p.verdict.kind} if p.verdict else {}),
                        **({"not_judged": p.busy} if p.busy else {}),
                    }
                    for p in s.points
                ],
            }
            for s in found
        ]

    def table(self, found, context):
        if not found:
            return None
        return (
            f"By {context.metric.title}: each point the runs of one commit, judged against "
            "the one before.",
            history.HEADER,
            history.rows(found, context.options.min_runs),
            [],
        )

    def html(self, found, context):
        text = super().html(found, context)
        if text and context.options.charts:
            from ..site import render

            text += "\n" + render.charts_section(
                render.history_images(found, context.metric, looks.by_row(context.grid.rows)),
                "history-charts",
                "History charts",
                "each configuration over its commits "
                "(▼ slower, ▲ faster than the point before, by the rule)",
            )
        return text

    def write(self, found, context, directory):
        """history.md, history.csv and, with charts, one history chart per task."""
        from ... import files

        files.write_text(
            directory / "history.md",
            history.markdown(found, context.metric, context.options.min_runs),
        )
        history.write_csv(found, directory / "history.csv")
        if found and context.options.charts:
            history.write_charts(found, context.metric, directory, looks.by_row(context.grid.rows))


BUILT_IN = [
    Comparisons(),
    TimeToTarget(),
    Settings(),
    Reference2018(),
    Hosts(),
    Scaling(),
    Agreement(),
    Costs(),
    Baseline(),
    History(),
]
