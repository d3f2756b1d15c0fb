"""The capability check: every config problem stops here, before a worker starts."""

import dataclasses
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from bench_shared import contract

from .. import conf_dir
from ..errors import BenchError, ConfigError, UnsupportedError
from . import sysinfo
from .config import Config


def framework_names():
    """Every framework with a config file: tests and sweeps discover frameworks from here."""
    return sorted(p.stem for p in (conf_dir() / "framework").glob("*.yaml"))


def declared(framework: str) -> dict[str, Any]:
    """A framework's config file as plain data, read without Hydra and without the framework."""
    path = Path(conf_dir()) / "framework" / f"{framework}.yaml"
    data = OmegaConf.to_container(OmegaConf.load(path))
    data.pop("defaults", None)
    return data


def check(cfg: Config, layout=None) -> None:
    """The declaration (conf/framework/<fw>.yaml) against the run: the same rule the worker
    applies before the package's setup (bench_shared.contract), plus what only this machine
    can tell (is there a GPU?) for the devices it starts (`layout`: a multi-node Slurm step's
    share, bench.run.slurm)."""
    local = layout["local_devices"] if layout else cfg.devices
    fw, device = cfg.framework, cfg.device.name
    reason = contract.unsupported(
        dataclasses.asdict(fw.capabilities), fw.name, cfg.task.name, device, cfg.precision.name
    )
    if reason:
        raise UnsupportedError(reason)
    problem = contract.devices_problem(
        dataclasses.asdict(fw.capabilities), fw.name, cfg.task.name, device, cfg.devices
    )
    if problem:
        raise (UnsupportedError if problem[0] == "unsupported" else ConfigError)(problem[1])
    problem = contract.option_problem(fw.name, fw.options, fw.option_choices)
    if problem:
        raise BenchError(problem)
    if device == "gpu":
        gpus = sysinfo.gpus()
        if not gpus:
            raise UnsupportedError(
                "device=gpu: no NVIDIA GPU found on this machine "
                "(nvidia-smi is missing or lists none); use device=cpu"
            )
        last = cfg.device.index + local - 1  # devices=N takes N GPUs from the index on
        if last >= len(gpus):
            raise UnsupportedError(
                f"device.index={cfg.device.index} with {local} devices"
                f": this machine has {len(gpus)} GPU(s), indices 0.."
                f"{len(gpus) - 1}"
            )
    elif local > len(sysinfo.usable_cpus()):
        raise UnsupportedError(
            f"devices={local} on device=cpu: one process per share of "
            f"the cores, and this process may use {len(sysinfo.usable_cpus())}"
            f" CPU(s)"
        )
