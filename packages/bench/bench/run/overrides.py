"""The command line's overrides checked against conf/ before Hydra composes anything, each
problem one line in the project's words (bench.cli: exit status 2): an override Hydra cannot
read, an option a config group does not have, a key the config does not have (set or added
with `+`), a list of values without `-m`, a comparison preset without `-m`, an empty run or
sweep directory. Read from the
options' files and the typed schemas (run/config.py), never composed; what only composing
finds (a value of the wrong type) is Hydra's error, which `hydra_error` says in one line.
"""

import dataclasses
import difflib
import os
import typing
from pathlib import Path

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import OverrideType
from hydra.errors import HydraException
from omegaconf import OmegaConf

from .. import conf_dir, files
from . import config, sweep

MULTIRUN = ("-m", "--multirun")
SHOWING = ("--cfg", "-c", "--info", "-i")  # Hydra prints the config and runs nothing
NOT_RUNNING = SHOWING + ("--help", "--hydra-help", "--version", "-sc", "--shell-completion")


def groups():
    """Every config group (a directory of conf/) and its options (its YAML files)."""
    return {
        p.name: sorted(f.stem for f in p.glob("*.yaml"))
        for p in sorted(conf_dir().iterdir())
        if p.is_dir()
    }


def closest(word, choices):
    """The choice closest to word (case aside), or None."""
    lower = {str(c).lower(): c for c in choices}
    found = difflib.get_close_matches(str(word).lower(), lower, n=1, cutoff=0.6)
    return lower[found[0]] if found else None


def check(argv, sweeps=None):
    """ValueError, one line, for the first problem of argv's overrides. sweeps: whether a
    list of values may sweep (default: whether argv has -m; `prepare` prepares each)."""
    a_run = sweeps is None  # the command line of a run, not of a sub-command
    sweeps = any(a in MULTIRUN for a in argv) if sweeps is None else sweeps
    options = groups()
    chosen = _defaults(options)
    parsed = []
    for text in argv:
        key, _, value = text.lstrip("+~").partition("=")
        if text.startswith("~") and key in chosen:
            raise ValueError(
                f"{text}: every run has a {key} ({key}: {', '.join(options[key])}); choose "
                f"one with {key}=<option> rather than removing it"
            )
        if key in ("hydra.run.dir", "hydra.sweep.dir") and not value.strip():
            raise ValueError(  # e.g. hydra.run.dir=$DIR with DIR unset: the current directory
                f"{text}: an empty directory (an unset shell variable?); give the "
                f"directory, or leave {key} out for results/"
            )
        if "=" not in text or text.startswith("-") or text.lstrip("+~").startswith("hydra"):
            continue
        try:
            (override,) = OverridesParser.create().parse_overrides([text])
        except HydraException as exc:
            reason = " ".join(line.strip() for line in str(exc).splitlines()[:1])
            raise ValueError(
                f"{text}: not an override Hydra can read ({reason}); key=value, "
                f"quoted where the value holds a comma or a space"
            ) from None
        if override.package is not None:  # key@package=value: Hydra's to check
            continue
        values = _values(override)
        if override.is_sweep_override() and not sweeps:
            example = f"python -m bench -m {text} ..."
            raise ValueError(
                f"{text}: a list of values is a sweep: add -m ({example})"
                if a_run
                else f"{text}: one value only here (a list of values is a sweep of runs: {example})"
            )
        if override.key_or_group in options and values is not None:
            chosen[override.key_or_group] = values
        parsed.append((text, override, values))
    for text, override, values in parsed:
        key = override.key_or_group
        if key in options:
            _check_options(
                text, key, values, options[key], sweeps or any(a in SHOWING for a in argv)
            )
        elif override.type != OverrideType.DEL:
            _check_key(text, key, override.type, chosen)


def check_results_dir(argv):
    """Where Hydra puts the run's directory (in results/runs, or hydra.run.dir's parent), or
    the sweep's (results/sweeps/<its name>, or hydra.sweep.dir), tried before Hydra starts:
    files.NotWritable naming it and why, instead of Hydra's traceback from a resolver, a
    callback's warning or its sweeper."""
    if any(a in NOT_RUNNING for a in argv):
        return
    multirun = any(a in MULTIRUN for a in argv)
    key = "hydra.sweep.dir" if multirun else "hydra.run.dir"
    given = next((a.split("=", 1)[1] for a in argv if a.split("=", 1)[0].lstrip("+") == key), None)
    if given is not None and multirun:
        what = directory = Path(given.split("${", 1)[0] or ".")
    elif given is not None:  # the part before any interpolation, up to its last directory
        directory = Path(os.path.dirname(given.split("${", 1)[0]) or ".")
        what = f"the run's directory (in {directory})"
    elif multirun:  # its name as the resolver makes it (bench.run.sweep.sweep_name)
        task = [
            a
            for a in argv
            if "=" in a and not a.startswith("-") and not a.lstrip("+~").startswith("hydra")
        ]
        name = next((a.split("=", 1)[1] for a in task if a.split("=", 1)[0] == "sweep"), None)
        directory = Path("results/sweeps") / sweep.sweep_name(name, task)
        what = f"the sweep's directory {directory}"
    else:
        directory = Path("results/runs")
        what = f"the run's directory (in {directory})"
    files.check_writable(directory, str(what), f"{key}=DIR puts it elsewhere")


def _defaults(options):
    """group -> [the option conf/config.yaml's defaults list chooses]."""
    chosen = {}
    declared = OmegaConf.to_container(OmegaConf.load(conf_dir() / "config.yaml"))
    for entry in declared.get("defaults", []):
        if isinstance(entry, dict):
            for group, option in entry.items():
                group = group.split()[-1]  # "optional task_framework"
                if group in options and isinstance(option, str) and "${" not in option:
                    chosen[group] = [option]
    return chosen


def _values(override):
    """The option names an override gives (a sweep's each), or None where they are not plain
    names (a glob, a range, an interpolation, a list)."""
    try:
        if override.is_sweep_override():
            if not override.is_discrete_sweep():
                return None
            values = list(override.sweep_string_iterator())
        else:
            value = override.value()
            if value is not None and not isinstance(value, (str, int, float)):
                return None
            values = [value]
    except HydraException:  # a glob needs Hydra's config loader
        return None
    if any(v is not None and "${" in str(v) for v in values):
        return None
    return values


def _check_options(text, group, values, options, preset_allowed):
    if values is None:
        return
    for value in values:
        if value is not None and str(value) not in options:
            near = closest(value, options)
            raise ValueError(
                f"{group}={value}: {group} has no option {value!r}"
                + (f"; did you mean {group}={near}?" if near else "")
                + f" ({group}: {', '.join(options)})"
            )
    if group == "comparison" and values != [None] and not preset_allowed:
        raise ValueError(
            f"{text}: a comparison preset is a sweep over every installed "
            f"framework; run it with -m: python -m bench -m {text}"
        )


def _check_key(text, key, kind, chosen):
    """The key's path through the schemas: every part a field, down to an open mapping (a
    framework's `env`, ...); `+` only where the key is not there yet."""
    head, *rest = key.split(".")
    if not head:
        raise ValueError(f"{text}: an override is key=value, and this one has no key")
    fields = {f.name: f.type for f in dataclasses.fields(config.Config)}
    if head not in fields:
        near = closest(head, fields)
        raise ValueError(
            f"{text}: {head} is not a key of the config"
            + (f"; did you mean {near}?" if near else "")
            + f" (keys of the config: {', '.join(fields)})"
        )
    for option in chosen.get(head) or [None]:
        schema = config.option_schema(head, option) if option else fields[head]
        with_option = f" with {head}={option}" if option else ""
        node, parent = _dataclass(schema), head
        for i, part in enumerate(rest):
            if node is None:  # an open mapping: any key may be set or added
                break
            known = {f.name: f.type for f in dataclasses.fields(node)}
            if part not in known:
                near = closest(part, known)
                raise ValueError(
                    f"{text}: {parent}.{part} is not a key of the config"
                    f"{with_option}"
                    + (f"; did you mean {parent}.{near}?" if near else "")
                    + f" (keys of {parent}: {', '.join(known)})"
                )
            if i == len(rest) - 1 and kind == OverrideType.ADD:
                raise ValueError(
                    f"{text}: {key} is a key of the config already: set it "
                    f"without '+' ({text.lstrip('+')})"
                )
            node, parent = _dataclass(known[part]), f"{parent}.{part}"
        else:
            if not rest and kind == OverrideType.ADD:
                raise ValueError(
                    f"{text}: {key} is a key of the config already: set it "
                    f"without '+' ({text.lstrip('+')})"
                )


def _dataclass(kind):
    """The dataclass a field's type holds (Optional included), or None for an open one (a
    mapping, a list, Any, a scalar)."""
    if typing.get_origin(kind) is typing.Union:
        kinds = [k for k in typing.get_args(kind) if k is not type(None)]
        kind = kinds[0] if len(kinds) == 1 else None
    return kind if dataclasses.is_dataclass(kind) else None


def hydra_error(exc):
    """One line for an error Hydra or OmegaConf raised while composing the command line's
    config (the first lines of its message and of its cause, without the config search path
    or the object's details), or None for any other exception."""
    modules = {type(e).__module__.split(".")[0] for e in (exc, exc.__cause__) if e is not None}
    if not modules & {"hydra", "omegaconf"}:
        return None
    parts = [_one_line(str(exc))]
    if exc.__cause__ is not None and _one_line(str(exc.__cause__)) not in parts[0]:
        parts.append(_one_line(str(exc.__cause__)))
    return ": ".join(p for p in parts if p)


def _one_line(text):
    lines, items = [], []
    for line in text.splitlines():
        if line.startswith(("Config search path", "Set the environment variable HYDRA", "See ")):
            break
        if line.startswith("\t"):  # an option Hydra lists
            items.append(line.strip())
        elif line.strip() and not line.startswith(" "):  # not full_key, object_type, ...
            if items and lines:
                lines[-1] += " " + ", ".join(items)
            items = []
            lines.append(line.strip())
    if items and lines:
        lines[-1] += " " + ", ".join(items)
    return " ".join(lines)
