"""`python -m bench prepare [--verify] [overrides...]`: only download and prepare data.

For a machine with internet (a cluster's login node) before the runs: it composes the same
config as a run (same overrides, e.g. `task=cnn,rnn data=real`; a comma list prepares each
value), prepares that data into the cache and starts no worker. --verify re-hashes every
prepared file (data.verify=true) and prepares again whatever was altered.
Exit status: 0 prepared, 1 a dataset could not be prepared, 2 a bad command line.
"""

import argparse
import itertools
import sys

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from omegaconf.errors import OmegaConfBaseException

from .. import data, files
from ..console import subcommand
from ..errors import BenchError
from ..run import config, overrides


def combinations(overrides):
    """One override list per combination of comma-separated values, as a sweep would run."""
    choices = []
    for text, override in zip(overrides, OverridesParser.create().parse_overrides(overrides)):
        if override.is_sweep_override():
            if not override.is_discrete_sweep():
                raise ValueError(f"{text}: only comma-separated values can be swept here")
            key = override.get_key_element()
            choices.append([f"{key}={value}" for value in override.sweep_string_iterator()])
        else:
            choices.append([text])
    return [list(combination) for combination in itertools.product(*choices)]


def parser():
    p = argparse.ArgumentParser(
        prog="python -m bench prepare",
        description="Download and prepare data into the cache, starting no worker: the same "
        "config as a run (task=cnn,rnn data=real prepares each), for a machine with "
        "internet before the runs (a cluster's login node).",
        epilog="exit status: 0 prepared, 1 a dataset could not be prepared, 2 a bad command line.",
    )
    p.add_argument(
        "overrides",
        nargs="*",
        metavar="key=value",
        help="a run's overrides (comma-separated values: each one)",
    )
    p.add_argument(
        "--verify",
        action="store_true",
        help="re-hash every prepared file and prepare again what was altered",
    )
    return p


@subcommand
def main(argv):
    args = parser().parse_args(argv)
    verify = args.verify
    try:
        overrides.check(args.overrides, sweeps=True)  # a list: each value prepared
        runs = combinations(args.overrides)
    except (HydraException, ValueError) as exc:
        print(f"prepare: {exc}", file=sys.stderr)
        return 2
    status = 0
    try:
        for combination in runs:
            cfg = config.compose(combination)
            cfg.data.verify = cfg.data.verify or verify
            label = f"{cfg.task.name} data={cfg.data.name}"
            try:
                prepared = data.prepare(cfg.task, cfg.data, cfg.preset)
            except BenchError as exc:
                print(f"prepare {label}: {exc}", file=sys.stderr, flush=True)
                status = 1
                continue
            except OSError as exc:  # a cache that is a file, or read-only
                print(
                    f"prepare {label}: the data cache cannot be written: "
                    f"{files.path_problem(exc) or exc}; data.cache_dir=DIR (or "
                    f"BENCH_CACHE_DIR) puts it elsewhere",
                    file=sys.stderr,
                    flush=True,
                )
                return 1
            print(
                f"prepare {label}: {prepared['description']} in {prepared['cache_entry']}",
                flush=True,
            )
    except (HydraException, OmegaConfBaseException) as exc:
        print(f"prepare: {overrides.hydra_error(exc)}", file=sys.stderr)
        return 2
    return status
