"""`python -m bench check DIR...`: is this bundle of results fit to rank?

Every result file found is read against its schema; the results are grouped into
configurations (the repeats of one composed config on one kind of hardware, as the report
groups them) and each configuration is checked against the written rules of
bench.report.fitness (docs/trust.md, "Fit to rank"): VALID, or INVALID with every rule it
breaks and why. Refused configurations (unsupported, not installed) are listed and not ranked.

Exit status: 0 when every configuration is valid; 1 when any is invalid (or a file does not
follow the schema); 2 a bad command line or no result files.
"""

import argparse
import json
import sys

from ..console import count, fraction, subcommand
from ..report import fitness
from ..report.collection import Result, group
from ..report.metrics import CHOICES, headline
from ..run import results, summary

REFUSED = ("unsupported", "not_installed")


def parser():
    p = argparse.ArgumentParser(
        prog="python -m bench check",
        description="Whether a bundle of results is fit to rank: each configuration checked "
        "against the written rules (schema, status, clean commit, locked "
        "environment, steady state, quality target, repeats, spread); VALID or "
        "INVALID with the reason.",
        epilog="exit status: 0 every configuration valid; 1 one is invalid; 2 a bad command "
        "line or no result files. The rules: docs/trust.md.",
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
        help=f"repeats a configuration needs (default {fitness.MIN_RUNS})",
    )
    p.add_argument(
        "--max-spread",
        type=fraction,
        default=fitness.MAX_SPREAD,
        metavar="X",
        help=f"how far a configuration's fastest run may be above its slowest, "
        f"max / min - 1 (default {fitness.MAX_SPREAD})",
    )
    p.add_argument(
        "--metric",
        choices=CHOICES,
        default="auto",
        help="the figure the spread is measured on (as `report --metric`)",
    )
    p.add_argument("--json", action="store_true", help="the verdicts as JSON")
    return p


def read(paths):
    """(the results as report Results, each file once; the Reading: the files that could
    not be used, with the rule each breaks, and the duplicates left out)."""
    reading = results.read(paths)
    return [Result.from_result(path, result) for path, result in reading.results], reading


@subcommand
def main(argv):
    args = parser().parse_args(argv)
    try:
        found, reading = read(args.paths)
    except FileNotFoundError as exc:
        print(f"check: {exc}", file=sys.stderr)
        return 2
    unreadable = reading.unreadable
    if not found and not unreadable:
        print(f"check: no result.json found in {' '.join(args.paths)}", file=sys.stderr)
        return 2
    metric = headline({r.preset for r in found}, args.metric)
    limits = fitness.Thresholds(args.min_runs, args.max_spread)
    verdicts, refused = [], []
    for configuration in group(found):
        if all(run.status in REFUSED for run in configuration.runs):
            refused.append(configuration)
        else:
            verdicts.append(fitness.judge(configuration, metric, limits))
    invalid = [v for v in verdicts if not v.valid]
    if args.json:
        print(
            json.dumps(
                {
                    "valid": not invalid and not unreadable,
                    "configurations": [
                        {
                            "label": summary.label(v.configuration.first.result),
                            "hardware": v.configuration.first.hardware,
                            "runs": [str(r.path) for r in v.configuration.runs],
                            "valid": v.valid,
                            "broken": [{"rule": n, "why": w} for n, w in v.broken],
                        }
                        for v in verdicts
                    ],
                    "unreadable": [
                        {"path": str(p), "rule": e.rule, "why": str(e)} for p, e in unreadable
                    ],
                    "duplicates": [
                        {"path": str(p), "repeats": str(first), "how": how}
                        for p, first, how in reading.duplicates
                    ],
                    "refused": [summary.label(c.first.result) for c in refused],
                },
                indent=1,
            )
        )
    else:
        for path, exc in unreadable:
            print(f"INVALID  {path}: {exc.rule}: {exc}")
        for path, first, how in reading.duplicates:
            print(f"{'counted':<8} {path}: {how} as {first}, counted once")
        for v in verdicts:
            head = (
                f"{summary.label(v.configuration.first.result)} on "
                f"{v.configuration.first.hardware} ({len(v.configuration.runs)} runs)"
            )
            print(
                f"{'VALID' if v.valid else 'INVALID':<8} {head}"
                + (
                    ""
                    if v.valid
                    else "\n" + "\n".join(f"           {name}: {why}" for name, why in v.broken)
                )
            )
        for c in refused:
            print(f"{'refused':<8} {summary.label(c.first.result)}: {c.first.status}, not ranked")
        bad = len(invalid) + len(unreadable)
        print(
            f"check: {len(verdicts) - len(invalid)} of {len(verdicts)} configurations valid"
            + (f", {len(unreadable)} files not readable" if unreadable else "")
            + (
                f", {len(reading.duplicates)} duplicate "
                f"file{'s' if len(reading.duplicates) > 1 else ''} counted once"
                if reading.duplicates
                else ""
            )
            + (f", {len(refused)} refused" if refused else "")
            + (
                ": the bundle is fit to rank (by the rules of docs/trust.md)"
                if not bad
                else ": the bundle is not fit to rank"
            )
        )
    return 1 if invalid or unreadable else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
