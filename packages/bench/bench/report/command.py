"""`python -m bench report <result dirs or files...>`: tables and charts from result.json files
alone.

Writes into --out (default results/reports/<time>/): report.md (DeepLearningFrameworks' table:
framework rows; per task one column per hardware/precision found, each with how many times
slower than its fastest row; then hyperfine-style sentences), report.json (the same as data,
report.schema.json), results.csv (one flat row per run) and <task>.png (bar charts), and prints
report.md. It adds what the results allow: agreement across frameworks (seeds), data-parallel
scaling, host against host, a baseline's verdicts, the 2018 figures, a history. With --into FILE
it writes only the main table (or --table agreement's), into FILE's block marked with the same
arguments: the tables of the documentation, regenerated from committed result files
(docs/reports.md).
"""
import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import files
from ..console import subcommand
from . import (
    agreement,
    baseline,
    document,
    history,
    host_comparison,
    into,
    metrics,
    reference_2018,
    scaling,
    tables,
)
from .collection import Grid, collect

EPILOG = """\
exit status: 0; 1 when the baseline comparison flags something; 2 a bad command line or no
result files."""


def parser():
    p = argparse.ArgumentParser(
        prog="python -m bench report", epilog=EPILOG,
        description="Tables, charts and the HTML page from result.json files alone: one row "
                    "per framework, per task one column per hardware and precision. Repeated "
                    "runs of one configuration are one cell (median ± half the range).")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="result.json files, or directories searched for them")
    p.add_argument("--out", metavar="DIR",
                   help="where report.md, results.csv and the charts go (default "
                        "results/reports/<time>)")
    p.add_argument("--metric", choices=metrics.CHOICES, default="auto",
                   help="what the cells show: steady-state throughput, total time, throughput "
                        "over every epoch, the first epoch's time, or the host utilisation "
                        "(achieved FLOP/s over `python -m bench peak`'s; auto: total time when "
                        "every run is preset=full, else steady)")
    p.add_argument("--baseline", nargs="+", action="extend", default=[], metavar="PATH",
                   help="judge every configuration against these results: slower, less "
                        "accurate, or no longer ok (see --min-change, --accuracy-drop)")
    p.add_argument("--min-change", "--slower", type=float, default=0.05, metavar="X",
                   dest="min_change",
                   help="a change (baseline, host against host, history) is real when the "
                        "median moved by more than this fraction and the runs do not overlap "
                        "(default 0.05)")
    p.add_argument("--min-runs", type=int, default=2, metavar="N",
                   help="runs each side needs before a change is judged (default 2)")
    p.add_argument("--accuracy-drop", type=float, default=0.02, metavar="X",
                   help="with --baseline: accuracy this much lower, the runs not overlapping, "
                        "is flagged (default 0.02 = 2 points)")
    p.add_argument("--reference", action="store_true",
                   help="DeepLearningFrameworks' 2018 figures (K80/P100 GPUs): beside full "
                        "runs' total times, per example otherwise")
    p.add_argument("--history", action="store_true",
                   help="each configuration over date and commit: history.md, .csv, .png")
    p.add_argument("--by-host", action="store_true",
                   help="one column per host, not per kind of hardware")
    p.add_argument("--no-charts", action="store_true", help="skip the PNGs and the page's charts")
    p.add_argument("--interrupted", action="store_true",
                   help="also the runs a signal cut short (left out otherwise)")
    p.add_argument("--html", metavar="OUT",
                   help="also write the Rosetta page, OUT/index.html: one self-contained file "
                        "with the results, comparisons, charts, hosts, verify results and every "
                        "framework's code side by side (with no result files, the code view "
                        "alone)")
    p.add_argument("--no-code", action="store_true",
                   help="with --html: the results alone, without the code view")
    p.add_argument("--verify", nargs="+", action="extend", default=[], metavar="PATH",
                   help="with --html: verify.json files (or `bench verify` output directories)")
    p.add_argument("--into", metavar="FILE",
                   help="only put one table (its legend and the table; see --table) into FILE, "
                        "between the line `<!-- bench report: <this command's other "
                        "arguments> -->` and the line `<!-- end bench report -->`; nothing "
                        "else is written")
    p.add_argument("--table", choices=("main", "agreement"), default="main",
                   help="with --into: the main table (default), or the agreement section's "
                        "tables (runs of two seeds or more)")
    return p


@dataclass
class Report:
    """What a report holds: the markdown, the grid and the comparisons made from it."""

    text: str
    grid: Grid
    findings: list = None  # the baseline's, with --baseline
    host_pairs: list = field(default_factory=list)
    history: list = None  # with --history
    reference: object = None  # with --reference

    @property
    def flagged(self):
        return [f for f in self.findings or () if f.flagged]


def build(args) -> Report:
    found = collect(args.paths, args.interrupted)
    if not found:
        raise ValueError(f"no result.json found in {' '.join(args.paths)}")
    if args.min_runs < 1 or args.min_change < 0:
        raise ValueError("--min-runs must be 1 or more and --min-change 0 or more")
    grid = Grid(found, by_host=args.by_host, metric_name=args.metric)
    reference = reference_2018.load() if args.reference else None
    text = main_table(grid, reference)
    sentences = tables.comparisons_markdown(grid)
    if sentences:
        text += "\n" + sentences
    if reference:
        text += reference_2018.markdown_section(grid, reference)
    report = Report(text, grid, reference=reference)
    report.host_pairs = host_comparison.pairs(grid, args.min_change, args.min_runs)
    if report.host_pairs:
        report.text += "\n" + host_comparison.markdown(report.host_pairs, grid.metric,
                                                       args.min_runs)
    scaled = scaling.pairs(grid)
    if scaled:
        report.text += "\n" + scaling.markdown(scaled)
    agreeing = agreement.groups(grid)
    if agreeing:
        report.text += "\n" + agreement.markdown(agreeing)
    if args.baseline:
        old = collect(args.baseline)
        if not old:
            raise ValueError(f"no result.json found in the baseline {' '.join(args.baseline)}")
        report.findings = baseline.compare(
            grid, Grid(old, by_host=args.by_host, metric_name=grid.metric.name),
            args.min_change, args.accuracy_drop, args.min_runs)
        report.text += "\n" + baseline.markdown(report.findings, grid.metric, args.min_change,
                                                 args.accuracy_drop, args.min_runs)
    if args.history:
        report.history = history.series(grid, args.min_change, args.min_runs)
        report.text += "\n" + history.markdown(report.history, grid.metric, args.min_runs)
    return report


def main_table(grid, reference=None):
    """The legend and the table (with the 2018 columns when `reference` is loaded)."""
    return tables.markdown(grid, reference_2018.extra_columns(grid, reference)
                           if reference else None)


def into_file(args, argv):
    """Replace, in args.into, the block whose marker records this command's arguments (argv
    less --into FILE) with the legend and the main table (or --table's); the file's path."""
    path = Path(args.into)
    lines, starts = into.blocks(path, into.marker_arguments(argv))
    found = collect(args.paths, args.interrupted)
    if not found:
        raise ValueError(f"no result.json found in {' '.join(args.paths)}")
    grid = Grid(found, by_host=args.by_host, metric_name=args.metric)
    if args.table == "agreement":
        table = agreement.markdown(agreement.groups(grid), heading=False)
        if not table:
            raise ValueError(f"--table agreement: no training configuration in "
                             f"{' '.join(args.paths)} has two seeds or more")
    else:
        table = main_table(grid, reference_2018.load() if args.reference else None)
    into.replace(path, lines, starts, table)
    return path


def html_page(args, report):
    """OUT/index.html (`report`: a Report, or None for the code view alone); its path."""
    from . import site  # pygments: only for the page

    out = Path(args.html)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--html {out} is a file; --html names the directory that gets "
                         f"index.html")
    page = site.build(report, args.verify, charts=not args.no_charts, code=not args.no_code)
    try:
        path = site.write(out, page)
    except OSError as exc:
        raise ValueError(f"--html {out}: cannot write index.html there "
                         f"({exc.strerror or exc})") from None
    print(f"report: {path} ({path.stat().st_size / 1024:.0f} KiB)")
    return path


@subcommand
def main(argv):
    args = parser().parse_args(argv)
    try:
        if args.verify and not args.html:
            raise ValueError("--verify goes with --html (the page shows the verify results)")
        if args.table != "main" and not args.into:
            raise ValueError("--table goes with --into (the report itself has every table)")
        if args.into:
            if not args.paths or args.html:
                raise ValueError("--into takes result files or directories and writes the "
                                 "table alone (no --html)")
            print(f"report: table written into {into_file(args, argv)}")
            return 0
        if not args.paths:
            if not args.html:
                raise ValueError("no result files or directories given")
            html_page(args, None)  # the code view alone
            return 0
        report = build(args)
        if args.html:
            html_page(args, report)
    except (ValueError, FileNotFoundError) as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out or Path("results", "reports", time.strftime("%Y-%m-%d_%H-%M-%S")))
    out.mkdir(parents=True, exist_ok=True)
    grid = report.grid
    files.write_text(out / "report.md", report.text)
    files.write_json(out / "report.json", document.build(
        grid, args.paths, report.findings, report.host_pairs, report.history))
    tables.write_csv(grid.runs, out / "results.csv", scaling.efficiency_of(grid))
    agreeing = agreement.groups(grid)
    if agreeing:
        agreement.write_csv(agreeing, out / "agreement.csv")
    if report.history is not None:
        history.write_csv(report.history, out / "history.csv")
    if not args.no_charts:
        from .charts import write_charts  # matplotlib: only when charts are wanted

        write_charts(grid, out)
        if report.history:
            history.write_charts(report.history, grid.metric, out)
    print(report.text)
    print(f"report: {out}")
    return 1 if report.flagged else 0
