"""`python -m bench report ... --html OUT`: the Rosetta page, one self-contained HTML file
(OUT/index.html) with the results table and its warnings, the time-to-target table, the
learning curves, the comparisons (frameworks, settings within a framework, hosts, a baseline,
the 2018 figures, a history), the charts, each host's environment, `bench verify`'s deviations
and, per task, any two frameworks' code side by side (`--no-code`: without it). With no result
files it is the code view alone."""

from pathlib import Path

from ... import conf_dir
from . import content, curves, render, rosetta


def build(
    report=None, verify_paths=(), conf: Path = None, checkout: Path = None, charts=True, code=True
):
    """The page's HTML. `report`: a bench.report.command.Report of the results, or None for the
    code alone; code=False leaves the code view out (a results-only page)."""
    sections, nav = [], []
    grid = report.grid if report is not None else None
    if grid is not None and grid.runs:
        from .. import curves as curve_data
        from .. import tables

        sections.append(
            render.results_section(
                content.results_table(grid),
                len(grid.runs),
                grid.metric,
                tables.legend(grid),
                warnings=report.warnings,
            )
        )
        nav.append(("results", "Results"))
        if report.to_target is not None:
            sections.append(
                render.results_section(
                    content.results_table(report.to_target),
                    len(report.to_target.runs),
                    report.to_target.metric,
                    tables.legend(report.to_target),
                    "time-to-target",
                    "Time to the quality target",
                )
            )
            nav.append(("time-to-target", "Time to target"))
        found = curve_data.curves(grid)
        if found:
            sections.append(curves.section(found))
            nav.append(("curves", "Learning curves"))
        for anchor, heading, part in comparison_sections(report):
            sections.append(part)
            nav.append((anchor, heading))
        if charts:
            sections.append(render.charts_section(render.chart_images(grid)))
            nav.append(("charts", "Charts"))
            if report.history:
                sections.append(
                    render.charts_section(
                        render.history_images(report.history, grid.metric),
                        "history-charts",
                        "History charts",
                        "each configuration over its commits "
                        "(▼ slower, ▲ faster than the point before, by the rule)",
                    )
                )
                nav.append(("history-charts", "History charts"))
        sections.append(render.hosts_section(content.hosts(grid.runs)))
        nav.append(("environment", "Environment"))
    verify_tables = [content.verify_table(p) for p in verify_paths]
    if verify_tables:
        sections.append(render.verify_section(verify_tables))
        nav.append(("verify", "Verify"))
    if code:
        views = rosetta.views(conf or conf_dir(), checkout)
        reasons = {(fw, s.option): s.reason for s in rosetta.switches() for fw in s.frameworks}
        sections.append(render.code_section(views, reasons))
        nav.append(("code", "The models side by side"))
        nav += [(f"code-{v.task}", f"· {v.task}") for v in views]
    runs = len(grid.runs) if grid is not None else 0
    subtitle = (
        f"{runs} runs; the same models in every framework, side by side"
        if runs
        else "The same models in every framework, side by side (no result files given)"
    )
    return render.page(sections, nav, subtitle)


def comparison_sections(report):
    """(anchor, heading, HTML) of what the report compared: frameworks, hosts, the baseline,
    the 2018 figures, the history."""
    from .. import axes, baseline, history, reference_2018, tables

    grid, metric = report.grid, report.grid.metric
    found = []
    sentences = [s for _, _, s in tables.comparisons(grid)]
    if report.to_target is not None:
        sentences += [f"By time to target: {s}" for _, _, s in tables.comparisons(report.to_target)]
    if sentences:
        found.append(
            (
                "comparisons",
                "Compared",
                render.table_section(
                    "comparisons",
                    "Compared",
                    f"By {metric.title}; each range is the ratio's 95 % "
                    "interval from a seeded bootstrap over the repeats (n=1: none), and a ratio "
                    "whose interval holds 1 is no difference shown. A configuration below its "
                    "quality target or at chance is not compared.",
                    [],
                    [],
                    sentences,
                ),
            )
        )
    if report.settings:
        found.append(
            (
                "settings",
                "Settings within a framework",
                render.table_section(
                    "settings",
                    "Settings within a framework",
                    f"Each setting against the declared "
                    f"baseline (precision fp32, tuned=false, an option's default), by "
                    f"{metric.title} and by the time to the quality target, with the ratio's "
                    "95 % interval.",
                    axes.HEADER,
                    axes.rows(report.settings, metric),
                ),
            )
        )
    if report.host_pairs:
        rows = [
            [
                a.first.display_name,
                tables.title(a.task),
                f"{a.first.hostname} ({a.first.hardware})",
                f"{b.first.hostname} ({b.first.hardware})",
                f"{v.ratio:.2f}× ({v.low:.2f}–{v.high:.2f})",
                v.text(),
            ]
            for a, b, v in report.host_pairs
        ]
        found.append(
            (
                "hosts",
                "Host against host",
                render.table_section(
                    "hosts",
                    "Host against host",
                    f"The same configuration on two hosts, by {metric.title}.",
                    ["framework", "task", "faster host", "other host", "speed ratio", "verdict"],
                    rows,
                ),
            )
        )
    if report.findings is not None:
        rows = [
            [
                f.row,
                tables.title(f.task),
                f.where,
                tables.cell(f.baseline, metric),
                tables.cell(f.current, metric),
                f"{f.speed.ratio:.2f}×" if f.speed else "",
                f"{f.verdict.upper()} ({baseline.packages_text(f)})"
                if f.flagged and f.baseline is not None and f.current is not None
                else f.verdict.upper()
                if f.flagged
                else f.verdict,
            ]
            for f in report.findings
        ]
        flagged = sum(f.flagged for f in report.findings)
        found.append(
            (
                "baseline",
                "Against the baseline",
                render.table_section(
                    "baseline",
                    "Against the baseline",
                    f"{flagged} flagged: slower or less accurate "
                    f"beyond the threshold with no overlap of the runs, or no longer ok; too few "
                    f"runs are said, not flagged.",
                    [
                        "framework",
                        "task",
                        "hardware, precision",
                        "baseline",
                        "now",
                        "speed now / baseline",
                        "verdict",
                    ],
                    rows,
                ),
            )
        )
    if report.reference is not None:
        rows = []
        for task, columns in grid.columns.items():
            why = reference_2018.like_for_like(grid, task)
            for gpu in report.reference.gpus(task):
                for row in grid.rows:
                    theirs = report.reference.seconds(grid.display_names[row], task, gpu)
                    if theirs is None:
                        continue
                    if why is None:
                        ours = [
                            tables.cell(grid.cells.get((row, task, c)), metric) for c in columns
                        ]
                        rows.append(
                            [
                                row,
                                tables.title(task),
                                gpu,
                                f"{theirs:g} s",
                                "; ".join(o for o in ours if o),
                            ]
                        )
                    else:
                        per_example = reference_2018.per_example_seconds(task, theirs) * 1000
                        rows.append(
                            [
                                row,
                                tables.title(task),
                                gpu,
                                f"{per_example:.3g} ms per example (2018, first epoch included)",
                                f"not like for like: {why}",
                            ]
                        )
        found.append(
            (
                "reference",
                "The 2018 figures",
                render.table_section(
                    "reference",
                    "The 2018 figures",
                    f"DeepLearningFrameworks' published figures, "
                    f"{report.reference.hardware}: beside full runs' total times; otherwise per "
                    f"example, labelled.",
                    ["framework", "task", "2018 GPU", "2018", "here"],
                    rows,
                ),
            )
        )
    if report.history:
        rows = [
            [
                s.label,
                p.date[:19],
                history.short_commit(p.commit),
                p.summary.text(tables.number) if p.summary else "-",
                p.busy or (p.verdict.text() if p.verdict else "first"),
            ]
            for s in report.history
            for p in s.points
        ]
        found.append(
            (
                "history",
                "History",
                render.table_section(
                    "history",
                    "History",
                    f"By {metric.title}: each point the runs of one commit, "
                    f"judged against the one before.",
                    ["configuration", "date", "commit", "value", "change"],
                    rows,
                ),
            )
        )
    return found


def write(out: Path, html: str) -> Path:
    """OUT/index.html; returns its path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "index.html"
    path.write_text(html, encoding="utf-8")
    return path
