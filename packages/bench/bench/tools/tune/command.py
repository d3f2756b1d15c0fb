"""`python -m bench tune framework=<name> task=<task>`: the command line of the search
(bench.tools.tune.search): its options, the overrides it refuses, the exit status."""

import argparse
import sys

from ... import files, signals
from ...console import subcommand
from ...errors import BenchError
from ...run import capabilities, overrides, profiles
from ...run.config import override_key
from .candidates import GRID_LIMIT
from .search import (
    ACCURACY_DROP,
    DEFAULT_PRESET,
    MIN_GAIN,
    REFUSED,
    ROUNDS,
    DefaultFailed,
    Tune,
    short_run,
)


def _parse(argv):
    parser = argparse.ArgumentParser(
        prog="python -m bench tune",
        usage="python -m bench tune framework=<name> task=<task> [key=value ...] [options]",
        description="The fastest setting of the framework's declared tuning switches on this "
        "host: every candidate a real run, in rounds that alternate the candidates; "
        "writes the host's profile, which `tuned=true` applies.",
        epilog="exit status: 0; 1 when the default configuration fails or where it writes "
        "cannot be written; 2 a bad command line or config; 130 after Ctrl-C, 143 after "
        "SIGTERM. More: docs/tuning.md.",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=ROUNDS,
        help=f"rounds per candidate (default {ROUNDS}); more add to those kept",
    )
    parser.add_argument(
        "--search",
        choices=["auto", "grid", "coordinate"],
        default="auto",
        help=f"every combination, or one switch at a time (auto: grid up to "
        f"{GRID_LIMIT} combinations)",
    )
    parser.add_argument(
        "--accuracy-drop",
        type=float,
        default=ACCURACY_DROP,
        metavar="X",
        help=f"a candidate this much less accurate than the default is not "
        f"chosen (default {ACCURACY_DROP})",
    )
    parser.add_argument(
        "--min-gain",
        type=float,
        default=MIN_GAIN,
        metavar="X",
        help=f"a candidate must be this much faster, its rounds not overlapping "
        f"(default {MIN_GAIN})",
    )
    parser.add_argument(
        "--compare-precision",
        default=None,
        metavar="P",
        help="also measure the tuned settings at precision P (e.g. bf16)",
    )
    parser.add_argument(
        "--restart", action="store_true", help="discard the measured rounds and start again"
    )
    parser.add_argument(
        "--out", default=None, metavar="DIR", help="the runs' directories (default results/tune)"
    )
    overrides = [a for a in argv if "=" in a and not a.startswith("-")]
    args = parser.parse_args([a for a in argv if a not in overrides])
    if args.rounds < 1:
        parser.error(f"--rounds {args.rounds}: at least 1")
    keys = [override_key(o) for o in overrides]
    for key in keys:
        if key.split(".")[0] in REFUSED:
            parser.error(
                f"{key}= has no place in a tune (it measures the composed config's "
                f"defaults against its candidates)"
            )
    for needed in ("framework", "task"):
        if needed not in keys:
            parser.error(
                f"name the {needed}: python -m bench tune framework=<name> "
                f"task=<task> (frameworks: "
                f"{', '.join(capabilities.framework_names())})"
            )
    if "preset" not in keys:
        overrides.append(f"preset={DEFAULT_PRESET}")
        task = next(o.split("=", 1)[1] for o, k in zip(overrides, keys) if k == "task")
        overrides += short_run(task, keys)
    return args, overrides


@subcommand
def main(argv):
    args, command_line = _parse(argv)
    try:
        overrides.check(command_line, sweeps=False)
    except ValueError as exc:  # a key or an option conf/ does not have: one line
        print(f"tune: {exc}", file=sys.stderr, flush=True)
        return 2
    signals.install()
    tune = None
    try:
        tune = Tune(args, command_line)
        tune.check_writable()
        # one tune per working file at a time: a second one stops and names the first
        with files.locked(
            profiles.working_path(tune.profile), timeout_s=0, hint="wait for that tune to finish"
        ):
            return tune.run()
    except KeyboardInterrupt as exc:
        signals.ignore()  # recorded; more signals must not cut the exit
        what = getattr(exc, "what", "Ctrl-C")
        kept = len(tune.work.measurements) if tune and hasattr(tune, "work") else 0
        where = f" in {tune.work.path}" if kept else ""
        print(
            f"\ninterrupted ({what}): the running worker was killed; {kept} finished rounds "
            f"kept{where}; the same command resumes",
            flush=True,
        )
        return getattr(exc, "exit_status", 130)
    except (DefaultFailed, files.NotWritable) as exc:
        print(f"tune: {exc}", file=sys.stderr, flush=True)
        return 1
    except BenchError as exc:
        print(f"tune: {exc}", file=sys.stderr, flush=True)
        return 2
    except Exception as exc:  # a bad override: Hydra's or OmegaConf's message, one line
        line = overrides.hydra_error(exc)
        if line is None:
            raise
        print(f"tune: {line}", file=sys.stderr, flush=True)
        return 2
