"""The capability check: every config problem stops here, before a worker starts."""
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from . import conf_dir, sysinfo
from .config import Config
from .errors import BenchError, UnsupportedError


def framework_names():
    """Every framework with a config file: tests and sweeps discover frameworks from here."""
    return sorted(p.stem for p in (conf_dir() / "framework").glob("*.yaml"))


def declared(framework: str) -> dict[str, Any]:
    """A framework's config file as plain data, read without Hydra and without the framework."""
    path = Path(conf_dir()) / "framework" / f"{framework}.yaml"
    data = OmegaConf.to_container(OmegaConf.load(path))
    data.pop("defaults", None)
    return data


def check(cfg: Config) -> None:
    fw, task, device, precision = cfg.framework, cfg.task.name, cfg.device.name, cfg.precision.name
    caps = fw.capabilities
    if task not in caps.tasks:
        raise UnsupportedError(f"task={task} is not supported by framework={fw.name}; "
                               f"supported tasks: {', '.join(caps.tasks)}")
    if device not in caps.precisions:
        raise UnsupportedError(f"device={device} is not supported by framework={fw.name}; "
                               f"supported devices: {', '.join(caps.precisions)}")
    if precision not in caps.precisions[device]:
        raise UnsupportedError(
            f"precision={precision} is not supported by framework={fw.name} on device={device}; "
            f"supported there: {', '.join(caps.precisions[device])}")
    for_task = caps.task_precisions.get(task, {}).get(device)
    if for_task is not None and precision not in for_task:
        raise UnsupportedError(
            f"precision={precision} is not supported by framework={fw.name} for task={task} on "
            f"device={device}; supported there: {', '.join(for_task)}")
    if device == "gpu":
        gpus = sysinfo.gpus()
        if not gpus:
            raise UnsupportedError("device=gpu: no NVIDIA GPU found on this machine "
                                   "(nvidia-smi is missing or lists none); use device=cpu")
        if cfg.device.index >= len(gpus):
            raise UnsupportedError(f"device.index={cfg.device.index}: this machine has "
                                   f"{len(gpus)} GPU(s), indices 0..{len(gpus) - 1}")
    check_options(fw.name, dict(fw.options))


def check_options(framework: str, options: dict[str, Any]) -> None:
    """Option names and value types must be those declared in conf/framework/<name>.yaml."""
    defaults = declared(framework).get("options", {})
    for key, value in options.items():
        if key not in defaults:
            raise BenchError(f"framework.options.{key} is not an option of framework={framework}; "
                             f"its options: {', '.join(defaults)}")
        default = defaults[key]
        if default is None or value is None:
            continue
        want = (int, float) if type(default) is float else type(default)
        if not isinstance(value, want) or isinstance(value, bool) != isinstance(default, bool):
            want = type(default)
            raise BenchError(f"framework.options.{key}={value!r} must be a {want.__name__} "
                             f"(default {defaults[key]!r})")
