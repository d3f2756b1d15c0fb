"""The environment a worker process starts with: ours, the framework's `env`, its
`library_path` in front of LD_LIBRARY_PATH, and for the rows written in R the interpreter
reticulate drives, the libraries it preloads and its OpenMP settings."""

import glob
import os
from pathlib import Path

from ..errors import ConfigError, EnvironmentNotFound
from . import sysinfo
from .config import Config


def library_path(cfg: Config, python):
    """framework.library_path with "{prefix}" expanded for the worker's interpreter."""
    prefix = str(Path(python).parent.parent)
    return [entry.replace("{prefix}", prefix) for entry in cfg.framework.library_path]


def r_preload(cfg: Config, python):
    """framework.r_preload expanded for the worker's interpreter; EnvironmentNotFound when one
    is not there."""
    prefix = str(Path(python).parent.parent)
    found = []
    for pattern in cfg.framework.r_preload:
        matches = sorted(glob.glob(pattern.replace("{prefix}", prefix)))
        if not matches:
            raise EnvironmentNotFound(
                f"framework={cfg.framework.name} preloads {pattern} (its r_preload), which "
                f"{prefix} lacks: rebuild it with `nox -s {cfg.framework.nox_session}`"
            )
        found.append(matches[0])
    return found


def r_start_environment(cfg: Config):
    """framework.r_start_env's variables from the run's options (an R row's OpenMP settings,
    which its framework's setup() would set too late); ConfigError for an unknown option."""
    env = {}
    for variable, option in cfg.framework.r_start_env.items():
        if option not in cfg.framework.options:
            raise ConfigError(
                f"framework={cfg.framework.name}: r_start_env.{variable} names "
                f"option {option!r}, which it does not have"
            )
        value = cfg.framework.options[option]
        if option == "threads":  # 0: every usable core, as the frameworks' setup() reads it
            value = value or sysinfo.cpu_affinity()
        if value != "":
            env[variable] = str(value)
    return env


def worker_environment(cfg: Config):
    """The worker's environment before its interpreter is known: ours and the framework's
    `env` (what the host record reads: the variables that change speed)."""
    env = dict(os.environ)
    env.update(cfg.framework.env)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def with_interpreter(cfg: Config, env, python):
    """env completed for the worker's interpreter: its `library_path` in front of
    LD_LIBRARY_PATH (that worker's alone, never ours), and for an R row the interpreter
    reticulate drives, its OpenMP settings and preloaded libraries."""
    env = dict(env)
    if cfg.framework.library_path:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            library_path(cfg, python) + list(filter(None, [env.get("LD_LIBRARY_PATH")]))
        )
    if cfg.framework.r_models:
        env["RETICULATE_PYTHON"] = python
        env.update(r_start_environment(cfg))
        preload = r_preload(cfg, python)
        if preload:
            env["LD_PRELOAD"] = " ".join(preload + list(filter(None, [env.get("LD_PRELOAD")])))
    return env


def environment_for(cfg: Config, python):
    """The whole environment of a worker started with `python` (a tool's worker: one step)."""
    return with_interpreter(cfg, worker_environment(cfg), python)
