"""What a tune tries: the framework's declared switches as dimensions, each with the default
first, and how a setting of them is named and keyed."""

import copy
import dataclasses
import json

from bench_shared import spec

from ...errors import BenchError
from ...run import worker_env

GRID_LIMIT = 8  # combinations measured in full; more: coordinate search


class TuneError(BenchError):
    """A tune that cannot start or cannot go on; the message says what to do."""


@dataclasses.dataclass(frozen=True)
class Dimension:
    kind: str  # "options" or "env"
    name: str
    values: tuple  # the default first


def show(value):
    """A value as the command line would write it: true, 0, PASSIVE, "" ; None: unset."""
    if value is None:
        return "unset"
    if isinstance(value, str):
        return value if value else '""'
    return json.dumps(value)


def settings_key(settings, precision):
    return json.dumps([settings, precision], sort_keys=True)


def label(settings, default):
    """How settings differ from the default: `channels_last=false OMP_WAIT_POLICY=PASSIVE`."""
    changed = [
        f"{name}={show(value)}"
        for kind in ("options", "env")
        for name, value in sorted(settings[kind].items())
        if value != default[kind].get(name)
    ]
    return " ".join(changed) or "default"


def space(cfg):
    """The dimensions a tune tries, from cfg.framework.tuning, and the default settings."""
    env = worker_env.worker_environment(cfg)
    tuning = cfg.framework.tuning
    for task, names in tuning.skip.items():
        unknown = [n for n in names if n not in cfg.framework.options and n not in tuning.env]
        if task not in spec.TASKS or unknown:
            raise TuneError(
                f"framework.tuning.skip.{task}: "
                + (
                    f"{task} is not a task ({', '.join(spec.TASKS)})"
                    if task not in spec.TASKS
                    else f"{', '.join(unknown)} is neither an option of "
                    f"framework={cfg.framework.name} nor one of its tuning.env"
                )
            )
    skipped = set(tuning.skip.get(cfg.task.name, ()))
    dims = []
    for name, candidates in sorted(tuning.options.items()):
        default = cfg.framework.options[name]
        dims.append(Dimension("options", name, tuple(dict.fromkeys([default, *candidates]))))
    for name, candidates in sorted(tuning.env.items()):
        dims.append(Dimension("env", name, tuple(dict.fromkeys([env.get(name), *candidates]))))
    dims = [d for d in dims if len(d.values) > 1 and d.name not in skipped]
    default = {"options": {}, "env": {}}
    for d in dims:
        default[d.kind][d.name] = d.values[0]
    return dims, default


def with_value(settings, dim, value):
    new = copy.deepcopy(settings)
    new[dim.kind][dim.name] = value
    return new
