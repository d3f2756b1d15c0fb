"""`python -m bench report ... --html OUT`: the Rosetta page, one self-contained HTML file
(OUT/index.html) with the results table and its warnings, the learning curves, every section
of the report (bench.report.sections: the comparisons, the time-to-target table, settings
within a framework, the 2018 figures, hosts, scaling, agreement, costs, a baseline, a history),
the charts, each host's environment, `bench verify`'s deviations
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
        found = curve_data.curves(grid)
        if found:
            sections.append(curves.section(found))
            nav.append(("curves", "Learning curves"))
        for part in report.parts:  # the comparisons: each section's own part of the page
            shown = part.section.html(part.found, report.context)
            if shown:
                sections.append(shown)
                nav.append((part.section.anchor, part.section.heading))
        if charts:
            sections.append(render.charts_section(render.chart_images(grid)))
            nav.append(("charts", "Charts"))
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


def write(out: Path, html: str) -> Path:
    """OUT/index.html; returns its path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "index.html"
    path.write_text(html, encoding="utf-8")
    return path
