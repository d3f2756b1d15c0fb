"""`python -m bench report ... --html OUT`: the Rosetta page, one self-contained HTML file
(OUT/index.html) with the results table, the charts, each host's environment, `bench verify`'s
deviations and, per task, any two frameworks' code side by side. With no result files it is
the code view alone."""
from pathlib import Path

from .. import conf_dir
from . import model, render, rosetta


def build(grid=None, verify_paths=(), conf: Path = None, checkout: Path = None, charts=True):
    """The page's HTML. `grid`: a bench.runs.Grid of the results, or None for the code alone."""
    sections, nav = [], []
    if grid is not None and grid.runs:
        sections.append(render.results_section(model.results_table(grid), len(grid.runs)))
        nav.append(("results", "Results"))
        if charts:
            sections.append(render.charts_section(render.chart_images(grid)))
            nav.append(("charts", "Charts"))
        sections.append(render.hosts_section(model.hosts(grid.runs)))
        nav.append(("environment", "Environment"))
    tables = [model.verify_table(p) for p in verify_paths]
    if tables:
        sections.append(render.verify_section(tables))
        nav.append(("verify", "Verify"))
    views = rosetta.views(conf or conf_dir(), checkout)
    reasons = {(fw, s.option): s.reason for s in rosetta.switches() for fw in s.frameworks}
    sections.append(render.code_section(views, reasons))
    nav.append(("code", "The models side by side"))
    nav += [(f"code-{v.task}", f"· {v.task}") for v in views]
    runs = len(grid.runs) if grid is not None else 0
    subtitle = (f"{runs} runs; the same models in every framework, side by side" if runs else
                "The same models in every framework, side by side (no result files given)")
    return render.page(sections, nav, subtitle)


def write(out: Path, html: str) -> Path:
    """OUT/index.html; returns its path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "index.html"
    path.write_text(html, encoding="utf-8")
    return path
