"""Tuning profiles: what `python -m bench tune` found fastest on this host for one framework,
task, device and precision, and how a run with `tuned=true` applies it.

A profile holds option values (`options`) and environment variables (`env`) for the
framework's workers. A run with `tuned=true` takes them on top of its composed config, except
options its own command line sets (those win, and the record says so) other than as the
tune's own command line did (its base, which the measured choice replaces); result.json's
`tuning` names the profile file and the values that ran. Precision is never part of a
profile: it is the run's own axis.
"""

from pathlib import Path

from .. import files
from ..errors import ConfigError
from . import host_files, sysinfo
from .config import override_key

VERSION = 1


def profile_path(cache_dir, key, framework, task, device, precision) -> Path:
    return (
        host_files.host_dir(cache_dir, key)
        / "tuning"
        / f"{framework}_{task}_{device}_{precision}.json"
    )


def working_path(profile: Path) -> Path:
    """The rounds measured so far (bench.tools.tune resumes from it)."""
    return profile.with_name(profile.stem + ".rounds.json")


def tune_command(framework, task, device, precision):
    return (
        f"python -m bench tune framework={framework} task={task} device={device} "
        f"precision={precision}"
    )


def _command_line_options(overrides, tuned_from):
    """framework.options.<name> keys set on the run's command line, less those set the same
    way on the tune's (the base its candidates were measured from: the profile replaces it)."""
    keys = (override_key(o) for o in overrides or () if o not in tuned_from)
    return {
        k.removeprefix("framework.options.") for k in keys if k.startswith("framework.options.")
    }


def _defaults_changed(cfg, profile, set_by_hand):
    """The tuned switches whose composed default is no longer the one the tune measured its
    candidates against (a new release's default), other than those a command line sets."""
    then = profile.get("defaults") or {"options": {}, "env": {}}
    now = {"options": cfg.framework.options, "env": cfg.framework.env}
    return [
        f"{name}: {then[kind][name]} -> {now[kind].get(name)}"
        for kind in ("options", "env")
        for name in sorted(then[kind])
        if f"framework.{kind}.{name}" not in set_by_hand
        and str(now[kind].get(name)) != str(then[kind][name])
    ]


def _shape_problem(profile):
    """What makes a profile of this VERSION unusable, or None: the fields a run reads."""
    if not isinstance(profile.get("options"), dict):
        return "no options"
    env = profile.get("env")
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        return "no environment of strings"
    tuned_from = profile.get("overrides", [])
    if not isinstance(tuned_from, list) or not all(isinstance(o, str) for o in tuned_from):
        return "its overrides are not a list of key=value"
    defaults = profile.get("defaults")
    if defaults is not None and not (
        isinstance(defaults, dict)
        and all(isinstance(defaults.get(kind), dict) for kind in ("options", "env"))
    ):
        return "its defaults are not options and env"
    return None


def apply(cfg, overrides=()):
    """Apply this host's profile to cfg (framework options and env, in place) and return the
    record for result.json; ConfigError when there is none or it no longer fits."""
    fw, task, device, precision = (
        cfg.framework.name,
        cfg.task.name,
        cfg.device.name,
        cfg.precision.name,
    )
    key = sysinfo.host_key(device, cfg.device.index)
    path = profile_path(cfg.data.cache_dir, key, fw, task, device, precision)
    command = tune_command(fw, task, device, precision)
    try:
        profile = files.read_json(path, f"run `{command}` again")
    except ValueError as exc:
        raise ConfigError(f"tuned=true: {exc}") from None
    if profile is None:
        raise ConfigError(
            f"tuned=true: no tuning profile for framework={fw} task={task} device={device} "
            f"precision={precision} on this host ({sysinfo.host_slug(key)}); expected {path}. "
            f"Run `{command}` first, or leave out tuned=true"
        )
    if not isinstance(profile, dict):
        raise ConfigError(
            f"tuned=true: {path} is not a tuning profile (not a JSON object); run `{command}` again"
        )
    if profile.get("version") != VERSION:
        raise ConfigError(
            f"tuned=true: {path} is a profile of another format "
            f"(version {profile.get('version')}); run `{command}` again"
        )
    problem = _shape_problem(profile)
    if problem:
        raise ConfigError(
            f"tuned=true: {path} is not a tuning profile ({problem}); run `{command}` again"
        )
    unknown = sorted(set(profile["options"]) - set(cfg.framework.options))
    if unknown:
        raise ConfigError(
            f"tuned=true: {path} sets {', '.join(unknown)}, which "
            f"framework={fw} no longer has; run `{command}` again"
        )
    kept = _command_line_options(overrides, profile.get("overrides") or ())
    by_hand = [*overrides, *(profile.get("overrides") or ())]  # this run's and the tune's
    changed = _defaults_changed(cfg, profile, {override_key(o) for o in by_hand})
    if changed:
        raise ConfigError(
            f"tuned=true: framework={fw}'s defaults changed since {path} was "
            f"measured against them ({', '.join(changed)}); run `{command}` again"
        )
    applied = {k: v for k, v in profile["options"].items() if k not in kept}
    cfg.framework.options.update(applied)
    cfg.framework.env.update(profile["env"])
    return {
        "profile": str(path),
        "options": applied,
        "env": dict(profile["env"]),
        "command_line_wins": sorted(kept & set(profile["options"])),
        "measured": profile.get("measured"),
        "speedup": profile.get("speedup"),
    }
