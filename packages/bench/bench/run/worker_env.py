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
                f"{prefix} lacks: rebuild it with `nox -s {cfg.framework.nox_session}`")
        found.append(matches[0])
    return found


def r_start_environment(cfg: Config):
    """framework.r_start_env's variables from the run's options (an R row's OpenMP settings,
    which its framework's setup() would set too late); ConfigError for an unknown option."""
    env = {}
    for variable, option in cfg.framework.r_start_env.items():
        if option not in cfg.framework.options:
            raise ConfigError(f"framework={cfg.framework.name}: r_start_env.{variable} names "
                              f"option {option!r}, which it does not have")
        value = cfg.framework.options[option]
        if option == "threads":  # 0: every usable core, as the frameworks' setup() reads it
            value = value or sysinfo.cpu_affinity()
        if value != "":
            env[variable] = str(value)
    return env


def worker_environment(cfg: Config, python=None):
    """The worker's environment: ours, the framework's `env`, and once its interpreter is known,
    its `library_path` in front of LD_LIBRARY_PATH (that worker's alone, never ours)."""
    env = dict(os.environ)
    env.update(cfg.framework.env)
    if python and cfg.framework.library_path:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            library_path(cfg, python) + list(filter(None, [env.get("LD_LIBRARY_PATH")])))
    env["PYTHONUNBUFFERED"] = "1"
    if python and cfg.framework.r_models:  # the interpreter the R worker drives (reticulate)
        env["RETICULATE_PYTHON"] = python
        env.update(r_start_environment(cfg))
        preload = r_preload(cfg, python)
        if preload:
            env["LD_PRELOAD"] = " ".join(preload + list(filter(None, [env.get("LD_PRELOAD")])))
    return env
