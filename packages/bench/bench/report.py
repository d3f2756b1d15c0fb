"""`python -m bench report <result dirs or files...>`: tables and charts from result.json files
alone.

Writes into --out (default results/reports/<time>/): report.md (DeepLearningFrameworks' table:
framework rows; per task the time with the test accuracy beside it, one column per
hardware/precision found), results.csv (one flat row per run) and <task>.png (bar charts),
and prints report.md. Where a training configuration was run with two seeds or more (e.g.
`python -m bench -m comparison=agreement`), report.md adds the agreement section (accuracy and
final loss per framework over seeds, the spread across frameworks against the seed noise,
frameworks outside it: bench/agreement.py) and agreement.csv its figures. Repeated runs of
one configuration are one cell (median ± half the range). Blank: not run; failed; —:
unsupported.

  --baseline PATH...   flag every configuration slower (--slower, default 0.10 = 10 %) or less
                       accurate (--accuracy-drop, default 0.02 = 2 points) than in these results
  --reference          DeepLearningFrameworks' 2018 figures (K80/P100 GPUs) beside ours, and in
                       full
  --by-host            one column per host, not per kind of hardware
  --no-charts          skip the PNGs (and the page's charts)
  --html OUT           also write the Rosetta page, OUT/index.html: one self-contained file with
                       the results table (sortable), charts, each host's environment, the
                       verify results and every framework's code side by side; with no result
                       files, the code view alone
  --verify PATH...     verify.json files (or `bench verify` output directories) for the page

Exit status: 0; 1 when the baseline comparison flags something; 2 a bad command line or no
result files.
"""
import argparse
import sys
import time
from pathlib import Path

from . import agreement, baseline, reference_2018, runs, scaling, tables


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise ValueError(message)


def parser():
    p = _Parser(prog="python -m bench report", add_help=False)
    p.add_argument("paths", nargs="*")
    p.add_argument("--out")
    p.add_argument("--baseline", nargs="+", action="extend", default=[])
    p.add_argument("--slower", type=float, default=0.10)
    p.add_argument("--accuracy-drop", type=float, default=0.02)
    p.add_argument("--reference", action="store_true")
    p.add_argument("--by-host", action="store_true")
    p.add_argument("--no-charts", action="store_true")
    p.add_argument("--html")
    p.add_argument("--verify", nargs="+", action="extend", default=[])
    return p


def build(args):
    """(markdown text, grid, flagged findings) for parsed arguments."""
    found = runs.collect(args.paths)
    if not found:
        raise ValueError(f"no result.json found in {' '.join(args.paths)}")
    grid = runs.Grid(found, by_host=args.by_host)
    reference = reference_2018.load() if args.reference else None
    text = tables.markdown(grid, reference)
    if reference:
        text += "\n" + reference.markdown()
    scaled = scaling.pairs(grid)
    if scaled:
        text += "\n" + scaling.markdown(scaled)
    agreeing = agreement.groups(grid)
    if agreeing:
        text += "\n" + agreement.markdown(agreeing)
    flagged = []
    if args.baseline:
        old = runs.collect(args.baseline)
        if not old:
            raise ValueError(f"no result.json found in the baseline {' '.join(args.baseline)}")
        findings = baseline.compare(grid, runs.Grid(old, by_host=args.by_host),
                                    args.slower, args.accuracy_drop)
        text += "\n" + baseline.markdown(findings, args.slower, args.accuracy_drop)
        flagged = [f for f in findings if f.flagged]
    return text, grid, flagged


def html_page(args, grid):
    """OUT/index.html; returns its path."""
    from . import site  # pygments: only for the page

    path = site.write(Path(args.html), site.build(grid, args.verify, charts=not args.no_charts))
    print(f"report: {path} ({path.stat().st_size / 1024:.0f} KiB)")
    return path


def main(argv):
    if not argv or any(a in ("-h", "--help") for a in argv):
        print(__doc__.strip())
        return 0 if argv else 2
    try:
        args = parser().parse_args(argv)
        if args.verify and not args.html:
            raise ValueError("--verify goes with --html (the page shows the verify results)")
        if not args.paths:
            if not args.html:
                raise ValueError("no result files or directories given")
            html_page(args, None)  # the code view alone
            return 0
        text, grid, flagged = build(args)
        if args.html:
            html_page(args, grid)
    except (ValueError, FileNotFoundError) as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out or Path("results", "reports", time.strftime("%Y-%m-%d_%H-%M-%S")))
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(text)
    tables.write_csv(grid.runs, out / "results.csv", scaling.efficiency_of(grid))
    agreeing = agreement.groups(grid)
    if agreeing:
        agreement.write_csv(agreeing, out / "agreement.csv")
    if not args.no_charts:
        from .charts import write_charts  # matplotlib: only when charts are wanted

        write_charts(grid, out)
    print(text)
    print(f"report: {out}")
    return 1 if flagged else 0
