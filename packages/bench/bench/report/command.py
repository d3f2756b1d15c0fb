"""`python -m bench report <result dirs or files...>`: tables and charts from result.json files
alone.

Writes into --out (default results/reports/<time>/): report.md (DeepLearningFrameworks' table:
framework rows; per task one column per hardware/precision found, each with how many times
slower than its fastest row and the ratio's interval; its warnings; hyperfine-style
sentences; the time-to-target table), report.json (the same as data, report.schema.json),
results.csv (one flat row per run), <task>.png (bar charts) and curves_<task>.png (learning
curves), and prints report.md. It adds what the results allow: a second axis within one
framework against its baseline value (precision, tuned, an option), agreement across
frameworks (seeds), data-parallel scaling, host against host, a baseline's verdicts, the 2018
figures, a history (history.md): each a section (bench.report.sections), shown alike in
report.md, report.json and the page. The directory is written whole: every file is made aside,
then moved in under the directory's lock, and the files of an earlier report that this one
does not write are removed. With --into FILE it writes only the main table (or --table
agreement's or settings'), into FILE's block marked with the same arguments: the tables of the
documentation, regenerated from committed result files (docs/reports.md).
"""

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import files
from ..console import count, fraction, subcommand
from . import (
    document,
    into,
    metrics,
    reference_2018,
    results_csv,
    scaling,
    sections,
    tables,
    warn,
)
from .collection import Grid, left_out_text, read, select, wanted_statuses

EPILOG = """\
exit status: 0; 1 when the baseline comparison flags something; 2 a bad command line, no
result files, or an output that cannot be written."""
MANIFEST = ".report-files"  # the files the last report wrote into its directory


def parser():
    p = argparse.ArgumentParser(
        prog="python -m bench report",
        epilog=EPILOG,
        description="Tables, charts and the HTML page from result.json files alone: one row "
        "per framework, per task one column per hardware and precision. Repeated "
        "runs of one configuration are one cell (median, spread, count); every "
        "ratio has its 95 % interval; a configuration below its quality target "
        "or at chance is never ranked faster.",
    )
    _what_to_read(p)
    _comparisons(p)
    _outputs(p)
    return p


def _what_to_read(p):
    """The runs read and what the cells show."""
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="result.json files, or directories searched for them",
    )
    p.add_argument(
        "--metric",
        choices=metrics.CHOICES,
        default="auto",
        help="what the cells show: steady-state throughput, total time, throughput "
        "over every epoch, the first epoch's time, the host utilisation "
        "(achieved FLOP/s over `python -m bench peak`'s), or the time to the "
        "task's quality target (training tasks); auto: total time when every "
        "run is preset=full, else steady (throughput when no run has a steady "
        "state)",
    )
    p.add_argument(
        "--status",
        choices=("ran", "all"),
        default="ran",
        help="the runs the tables show: ran (default: ok, failed, invalid) or all "
        "(also the runs refused before starting, unsupported and "
        "not_installed, and interrupted runs)",
    )
    p.add_argument(
        "--by-host", action="store_true", help="one column per host, not per kind of hardware"
    )
    p.add_argument(
        "--interrupted",
        action="store_true",
        help="also the runs a signal cut short (left out otherwise)",
    )


def _comparisons(p):
    """What the runs are judged against, and the rules of a change."""
    p.add_argument(
        "--baseline",
        action="append",
        default=[],
        metavar="PATH",
        help="judge every configuration against these results: slower, less "
        "accurate, or no longer ok (see --min-change, --accuracy-drop); once "
        "per path (--baseline A --baseline B)",
    )
    p.add_argument(
        "--min-change",
        "--slower",
        type=fraction,
        default=0.05,
        metavar="X",
        dest="min_change",
        help="a change (baseline, host against host, history) is real when the "
        "median moved by more than this fraction and the runs do not overlap "
        "(default 0.05)",
    )
    p.add_argument(
        "--min-runs",
        type=count,
        default=2,
        metavar="N",
        help="runs each side needs before a change is judged (default 2)",
    )
    p.add_argument(
        "--accuracy-drop",
        type=fraction,
        default=0.02,
        metavar="X",
        help="with --baseline: accuracy this much lower, the runs not overlapping, "
        "is flagged (default 0.02 = 2 points)",
    )
    p.add_argument(
        "--reference",
        action="store_true",
        help="DeepLearningFrameworks' 2018 figures (K80/P100 GPUs): beside full "
        "runs' total times, per example otherwise",
    )
    p.add_argument(
        "--history",
        action="store_true",
        help="each configuration over date and commit: history.md, .csv, .png",
    )


def _outputs(p):
    """Where the report goes: its directory, the page, one table into a file."""
    p.add_argument(
        "--out",
        metavar="DIR",
        help="where report.md, results.csv and the charts go (default results/reports/<time>)",
    )
    p.add_argument("--no-charts", action="store_true", help="skip the PNGs and the page's charts")
    p.add_argument(
        "--html",
        metavar="OUT",
        help="also write the Rosetta page, OUT/index.html: one self-contained file "
        "with the results, comparisons, charts, hosts, verify results and every "
        "framework's code side by side (with no result files, the code view "
        "alone)",
    )
    p.add_argument(
        "--no-code",
        action="store_true",
        help="with --html: the results alone, without the code view",
    )
    p.add_argument(
        "--verify",
        action="append",
        default=[],
        metavar="PATH",
        help="with --html: a verify.json file (or `bench verify` output directory); once per path",
    )
    p.add_argument(
        "--into",
        metavar="FILE",
        help="only put one table (its legend, the table and its warnings; see "
        "--table) into FILE, between the line `<!-- bench report: <this "
        "command's other arguments> -->` and the line `<!-- end bench report "
        "-->`; nothing else is written",
    )
    p.add_argument(
        "--table",
        choices=("main", "agreement", "settings"),
        default="main",
        help="with --into: the main table (default), the agreement section's "
        "tables (runs of two seeds or more, two frameworks or more), or the settings "
        "table (each setting, e.g. precision=bf16, against its framework's baseline)",
    )


@dataclass
class Report:
    """What a report holds: the markdown, the grid and what each section found in it."""

    text: str
    grid: Grid
    context: sections.Context
    parts: list = field(default_factory=list)  # [sections.Part] with something to show
    warnings: list = field(default_factory=list)  # the main table's, one line each
    left_out: dict = field(default_factory=dict)  # status -> runs left out of the tables
    every_run: list = field(default_factory=list)  # every run read: results.csv's rows

    def found(self, key):
        """What the section of that key found; None where it shows nothing."""
        return next((p.found for p in self.parts if p.section.key == key), None)

    @property
    def flagged(self):
        return [f for f in self.found("baseline") or () if f.flagged]


def runs_of(args, paths=None):
    """(The runs the report shows, by --status and --interrupted; Counter of the statuses of
    those it left out; every run read); a ValueError saying why when it shows none."""
    paths = args.paths if paths is None else paths
    found, reading = read(paths)
    if not found:
        raise ValueError(f"no result.json found in {' '.join(paths)}")
    kept, left_out = select(found, wanted_statuses(args.interrupted, args.status == "all"))
    if args.metric == "time_to_target":
        trained = [r for r in kept if r.kind == "train"]
        if kept and not trained:
            raise ValueError(
                "--metric time_to_target ranks training runs; these results "
                "hold inference runs only"
            )
        if len(trained) < len(kept):  # said, as every other run left out is
            left_out["inference"] = len(kept) - len(trained)
        kept = trained
    if not kept:
        raise ValueError(
            f"no result to report in {' '.join(paths)}: left out {left_out_text(left_out)}"
        )
    if left_out:
        print(f"report: left out {left_out_text(left_out)}", file=sys.stderr)
    if reading.duplicates:  # said by read(), counted in report.json
        left_out["duplicate"] = len(reading.duplicates)
    return kept, left_out, found


def build(args) -> Report:
    found, left_out, every_run = runs_of(args)
    grid = Grid(found, by_host=args.by_host, metric_name=args.metric, left_out=dict(left_out))
    context = sections.Context(grid, sections.Options.of(args))
    lines = warn.warnings(grid)
    parts = sections.find_all(context)
    text = main_table(grid, context.reference, lines)
    for part in parts:
        shown = part.section.markdown(part.found, context)
        if shown:
            text += "\n" + shown
    return Report(text, grid, context, parts, lines, dict(left_out), every_run)


def main_table(grid, reference=None, lines=None):
    """The legend, the table (with the 2018 columns when `reference` is loaded) and its
    warnings (`lines`; by default bench.report.warn's for the grid)."""
    table = tables.markdown(
        grid, reference_2018.extra_columns(grid, reference) if reference else None
    )
    found = warn.markdown(warn.warnings(grid) if lines is None else lines)
    return table + ("\n" + found if found else "")


def html_page(args, report):
    """OUT/index.html (`report`: a Report, or None for the code view alone); its path."""
    from . import site  # pygments: only for the page

    out = Path(args.html)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--html {out} is a file; --html names the directory that gets index.html")
    if report is None:
        if args.no_code:
            raise ValueError(
                "--html with --no-code and no result files would be an empty "
                "page; give the result files or directories to show"
            )
        holding = (
            next((p for p in out.rglob("result.json") if p.is_file()), None)
            if out.is_dir()
            else None
        )
        if holding is not None:
            raise ValueError(
                f"--html {out}: that directory holds result files ({holding}), "
                f"and no PATH was given, so the page would hold the code alone; "
                f"to report them: python -m bench report {out} --html {out}"
            )
    page = site.build(report, args.verify, charts=not args.no_charts, code=not args.no_code)
    try:
        path = site.write(out, page)
    except OSError as exc:
        raise ValueError(
            f"--html {out}: cannot write index.html there ({exc.strerror or exc})"
        ) from None
    print(f"report: {path} ({path.stat().st_size / 1024:.0f} KiB)")
    return path


def write_files(args, report, aside: Path):
    """Every file of the report, into the directory `aside`."""
    grid = report.grid
    files.write_text(aside / "report.md", report.text)
    files.write_json(
        aside / "report.json",
        document.build(
            grid,
            args.paths,
            report.parts,
            report.context,
            warnings=report.warnings,
            left_out=report.left_out,
        ),
    )
    # every run read, whatever the tables show: one row each, with its status
    results_csv.write_csv(
        report.every_run or grid.runs, aside / "results.csv", scaling.efficiency_of(grid)
    )
    for part in report.parts:
        part.section.write(part.found, report.context, aside)
    if not args.no_charts:
        from . import curves
        from .charts import write_charts  # matplotlib: only when charts are wanted

        write_charts(grid, aside)
        curves.write_charts(grid, aside, tables.uniform_text(grid.uniform))


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
                raise ValueError(
                    "--into takes result files or directories and writes the "
                    "table alone (no --html)"
                )
            found, left_out, _ = runs_of(args)
            grid = Grid(
                found, by_host=args.by_host, metric_name=args.metric, left_out=dict(left_out)
            )
            written = into.write(args, argv, grid, main_table)
            print(f"report: table written into {written}")
            return 0
        if not args.paths:
            if not args.html:
                raise ValueError("no result files or directories given")
            html_page(args, None)  # the code view alone
            return 0
        report = build(args)
        if args.html:
            html_page(args, report)
        out = Path(args.out or Path("results", "reports", time.strftime("%Y-%m-%d_%H-%M-%S")))
        try:
            files.write_whole(out, lambda aside: write_files(args, report, aside), MANIFEST)
        except OSError as exc:
            raise ValueError(
                f"--out {out}: cannot write the report there ({exc.strerror or exc})"
            ) from None
    except (ValueError, FileNotFoundError) as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 2
    print(report.text)
    print(f"report: {out}")
    return 1 if report.flagged else 0
