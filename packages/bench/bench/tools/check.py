"""`python -m bench check DIR...`: is this bundle of results fit to rank?

Every result file found is read the one way every command reads them (bench.run.results: the
schema, every figure re-derived from its measurements, each file once); the results are
grouped into configurations (the repeats of one composed config on one kind of hardware, as
the report groups them) and each configuration is checked against the written rules of
bench.report.fitness (docs/trust.md, "Fit to rank"): VALID, or INVALID with every rule it
breaks and why. Refused configurations (unsupported, not installed) are listed and not
ranked. Then the bundle as a whole (bench.report.bundle): its A/A controls must be ties, the
host must not have grown slower over it (else a host verdict replaces the configurations'),
rounds cut short are said, and each column's neighbouring configurations are ranked with the
share the bundle decides. With --agree-with, a second bundle made independently must agree
on every order both declare.

Exit status: 0 when every configuration is valid, every A/A control a tie and (with
--agree-with) no order flips; 1 otherwise (or a file does not follow the schema, or a host
verdict); 2 a bad command line or no result files.
"""

import argparse
import json
import sys

from ..console import count, fraction, subcommand
from ..report import bundle, fitness
from ..report.collection import Grid, Result, group, select, wanted_statuses
from ..report.metrics import CHOICES
from ..run import results, summary

REFUSED = ("unsupported", "not_installed")


def parser():
    p = argparse.ArgumentParser(
        prog="python -m bench check",
        description="Whether a bundle of results is fit to rank: each configuration checked "
        "against the written rules (schema and figures, status, clean commit, locked "
        "environment, steady state, quality target, undisturbed runs, the median's interval); "
        "VALID or INVALID with the reason; then the bundle's A/A controls, the host's trend "
        "and each column's ranking.",
        epilog="exit status: 0 every configuration valid, every A/A control a tie (and no "
        "order flipped against --agree-with); 1 otherwise; 2 a bad command line or no result "
        "files. The rules: docs/trust.md.",
    )
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="result.json files, or directories searched for them",
    )
    p.add_argument(
        "--min-runs",
        type=count,
        default=fitness.MIN_RUNS,
        metavar="N",
        help=f"undisturbed runs a configuration needs (default {fitness.MIN_RUNS})",
    )
    p.add_argument(
        "--max-interval",
        type=fraction,
        default=fitness.MAX_INTERVAL,
        metavar="X",
        help=f"how wide the 95 %% interval of a configuration's median may be, high / low - 1 "
        f"(default {fitness.MAX_INTERVAL})",
    )
    p.add_argument(
        "--metric",
        choices=CHOICES,
        default="auto",
        help="the figure the rules and the ranking use (as `report --metric`)",
    )
    p.add_argument(
        "--agree-with",
        action="append",
        default=[],
        metavar="PATH",
        help="a second bundle made independently (files or directories; once per path): "
        "every order both bundles declare must agree",
    )
    p.add_argument("--json", action="store_true", help="the verdicts as JSON")
    return p


def read(paths):
    """(the results as report Results, each file once; the Reading: the files that could
    not be used, with the rule each breaks, and the duplicates left out)."""
    reading = results.read(paths)
    return [Result.from_result(path, result) for path, result in reading.results], reading


def grid_of(found, metric):
    """The report's grid of the runs that ran (the tables' statuses), or None."""
    shown, _ = select(found, wanted_statuses())
    return Grid(shown, metric_name=metric) if shown else None


def judged(args):
    """Everything the check finds, as data; FileNotFoundError for a path that is not there."""
    found, reading = read(args.paths)
    grid = grid_of(found, args.metric)
    metric = grid.metric if grid else None
    limits = fitness.Thresholds(args.min_runs, args.max_interval)
    verdicts, refused = [], []
    for configuration in group(found):
        if all(run.status in REFUSED for run in configuration.runs):
            refused.append(configuration)
        elif metric is not None:
            verdicts.append(fitness.judge(configuration, metric, limits))
    host = bundle.host_verdict(found)
    report = {
        "found": found,
        "reading": reading,
        "grid": grid,
        "verdicts": verdicts,
        "refused": refused,
        "host": host,
        "controls": bundle.controls(grid) if grid else [],
        "cut_short": bundle.rounds_cut_short(found),
        "neighbours": bundle.neighbours(grid) if grid else [],
        "agreement": None,
    }
    if args.agree_with:
        other, _ = read(args.agree_with)
        other_grid = grid_of(other, args.metric)
        if grid is not None and other_grid is not None:
            report["agreement"] = bundle.agreement(grid, other_grid)
            report["other_grid"] = other_grid
            report["other_controls"] = bundle.controls(other_grid)
    return report


def failed(report):
    """Whether the bundle is not fit to rank."""
    agreement = report["agreement"]
    return bool(
        [v for v in report["verdicts"] if not v.valid]
        or report["reading"].unreadable
        or report["host"]
        or [c for c in report["controls"] if not c.tie]
        or (agreement is not None and agreement.flips)
        or [c for c in report.get("other_controls", []) if not c.tie]
    )


def as_json(report):
    reading, agreement = report["reading"], report["agreement"]
    decided, pairs, decided_apart, apart = bundle.decisiveness(report["neighbours"])
    return {
        "valid": not failed(report),
        "configurations": [
            {
                "label": summary.label(v.configuration.first.result),
                "hardware": v.configuration.first.hardware,
                "runs": [str(r.path) for r in v.configuration.runs],
                "disturbed": [str(r.path) for r in v.configuration.disturbed],
                "valid": v.valid,
                "broken": [{"rule": n, "why": w} for n, w in v.broken],
            }
            for v in report["verdicts"]
        ],
        "unreadable": [
            {"path": str(p), "rule": e.rule, "why": str(e)} for p, e in reading.unreadable
        ],
        "duplicates": [
            {"path": str(p), "repeats": str(first), "how": how}
            for p, first, how in reading.duplicates
        ],
        "refused": [summary.label(c.first.result) for c in report["refused"]],
        "host_verdict": report["host"].text if report["host"] else None,
        "controls": [{"text": c.text(), "tie": c.tie} for c in report["controls"]],
        "cut_short": report["cut_short"],
        "neighbours": {
            "decided": decided,
            "pairs": pairs,
            "decided_apart": decided_apart,
            "apart": apart,
        },
        "agreement": None
        if agreement is None
        else {
            "both": agreement.both,
            "flips": len(agreement.flips),
            "only_one": agreement.only_one,
        },
    }


def print_text(report):
    reading = report["reading"]
    for path, exc in reading.unreadable:
        print(f"INVALID  {path}: {exc.rule}: {exc}")
    for path, first, how in reading.duplicates:
        print(f"{'counted':<8} {path}: {how} as {first}, counted once")
    host = report["host"]
    if host:
        print(f"HOST     {host.kind}: {host.text}")
    for v in report["verdicts"]:
        c = v.configuration
        disturbed = f", {len(c.disturbed)} disturbed" if c.disturbed else ""
        head = (
            f"{summary.label(c.first.result)} on {c.first.hardware} ({len(c.runs)} runs{disturbed})"
        )
        if host:  # the host's verdict stands for every configuration's
            print(f"{'not judged':<8} {head}")
            continue
        print(
            f"{'VALID' if v.valid else 'INVALID':<8} {head}"
            + (
                ""
                if v.valid
                else "\n" + "\n".join(f"           {name}: {why}" for name, why in v.broken)
            )
        )
    for c in report["refused"]:
        print(f"{'refused':<8} {summary.label(c.first.result)}: {c.first.status}, not ranked")
    for line in report["cut_short"]:
        print(f"{'cut':<8} {line}")
    for control in report["controls"]:
        print(f"{'A/A':<8} {control.text()}")
    if report["neighbours"]:
        print_ranking(report)
    agreement = report["agreement"]
    if agreement is not None:
        print_agreement(report, agreement)
    verdicts = report["verdicts"]
    invalid = [v for v in verdicts if not v.valid]
    n = len(reading.duplicates)
    print(
        f"check: {len(verdicts) - len(invalid)} of {len(verdicts)} configurations valid"
        + (f", {len(reading.unreadable)} files not readable" if reading.unreadable else "")
        + (f", {n} duplicate file{'s' if n > 1 else ''} counted once" if n else "")
        + (f", {len(report['refused'])} refused" if report["refused"] else "")
        + (f", host verdict {host.kind}" if host else "")
        + (
            ": the bundle is fit to rank (by the rules of docs/trust.md)"
            if not failed(report)
            else ": the bundle is not fit to rank"
        )
    )


def print_ranking(report):
    """Each column's configurations by median, each against the next: `>` an order (`<` where
    the rounds order the pair against their medians), `~` a tie, `?` undecided or too few
    rounds; and the share of neighbouring pairs the bundle decides."""
    columns = {}
    for pair in report["neighbours"]:
        columns.setdefault((pair.faster.task, pair.faster.column), []).append(pair)
    for (task, column), pairs in columns.items():
        line = pairs[0].faster.row
        for pair in pairs:
            c = pair.comparison
            verdict = c.verdict if c is not None else None
            sign = {"faster": ">", "slower": "<"}.get(verdict)  # (< : the pair's own order)
            if sign is None:
                sign = "~" if pair.decided or verdict == "no difference shown" else "?"
            line += f" {sign} {pair.slower.row}" + (f" ({c.ratio.text()})" if c else "")
        print(f"{'ranking':<8} {task} {column}: {line}".rstrip())
    decided, pairs, decided_apart, apart = bundle.decisiveness(report["neighbours"])
    print(
        f"{'decided':<8} {decided} of {pairs} neighbouring pairs"
        + (
            f"; of those whose medians lie more than 10 % apart, {decided_apart} of {apart} "
            f"({decided_apart / apart:.0%})"
            if apart
            else ""
        )
    )


def print_agreement(report, agreement):
    other_controls = report.get("other_controls", [])
    ties = all(c.tie for c in report["controls"]) and all(c.tie for c in other_controls)
    print(
        f"{'agree':<8} {agreement.both} pairs ordered by both bundles, {len(agreement.flips)} "
        f"flipped; {agreement.only_one} ordered by one only (a tie or not run in the other)"
        + ("; the A/A controls a tie in both" if report["controls"] and ties else "")
    )
    for a, b in agreement.flips:
        print(
            f"{'FLIPPED':<8} {bundle.label(a, report['grid'])} against "
            f"{bundle.label(b, report['grid'])}"
        )
    for control in other_controls:
        print(f"{'A/A':<8} (the other bundle) {control.text()}")


@subcommand
def main(argv):
    args = parser().parse_args(argv)
    try:
        report = judged(args)
    except FileNotFoundError as exc:
        print(f"check: {exc}", file=sys.stderr)
        return 2
    if not report["found"] and not report["reading"].unreadable:
        print(f"check: no result.json found in {' '.join(args.paths)}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(as_json(report), indent=1))
    else:
        print_text(report)
    return 1 if failed(report) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
