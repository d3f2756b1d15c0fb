"""`python -m bench prepare [--verify] [overrides...]`: only download and prepare data.

For a machine with internet (a cluster's login node) before the runs: it composes the same
config as a run (same overrides, e.g. `task=cnn,rnn data=real`; a comma list prepares each
value), prepares that data into the cache and starts no worker. --verify re-hashes every
prepared file (data.verify=true) and prepares again whatever was altered.
Exit status: 0 prepared, 1 a dataset could not be prepared, 2 a bad command line.
"""
import itertools
import sys

from hydra import compose, initialize_config_dir
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from . import conf_dir, data
from .config import register
from .errors import BenchError


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


def main(argv):
    if any(arg in ("-h", "--help") for arg in argv):
        print(__doc__.strip())
        return 0
    verify = "--verify" in argv
    overrides = [arg for arg in argv if arg != "--verify"]
    unknown = [arg for arg in overrides if arg.startswith("-")]
    if unknown:
        print(f"prepare: unknown option {unknown[0]}; usage: python -m bench prepare "
              "[--verify] [key=value ...]", file=sys.stderr)
        return 2
    try:
        runs = combinations(overrides)
    except (HydraException, ValueError) as exc:
        print(f"prepare: {exc}", file=sys.stderr)
        return 2
    register()
    status = 0
    try:
        with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
            for combination in runs:
                cfg = OmegaConf.to_object(compose(config_name="config", overrides=combination))
                cfg.data.verify = cfg.data.verify or verify
                label = f"{cfg.task.name} data={cfg.data.name}"
                try:
                    prepared = data.prepare(cfg.task, cfg.data, cfg.preset)
                except BenchError as exc:
                    print(f"prepare {label}: {exc}", file=sys.stderr, flush=True)
                    status = 1
                    continue
                print(f"prepare {label}: {prepared['description']} in {prepared['cache_entry']}",
                      flush=True)
    except (HydraException, OmegaConfBaseException) as exc:
        print(f"prepare: {exc}", file=sys.stderr)
        return 2
    return status
