"""`python -m bench`: Hydra turns the command line into typed configs for bench.app;
`python -m bench prepare ...` only prepares data (bench.prepare)."""
import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from . import app, conf_dir, prepare
from .config import register

_statuses = []  # one per job of this process (a multirun with the basic launcher runs them all)


def _job(cfg: DictConfig) -> None:
    typed = OmegaConf.to_object(cfg)
    run_dir = Path(HydraConfig.get().runtime.output_dir)
    result = app.run_benchmark(typed, OmegaConf.to_container(cfg, resolve=True), run_dir)
    _statuses.append(result["status"])


def main() -> int:
    if sys.argv[1:2] == ["prepare"]:  # a subcommand: data only, no run directory, no worker
        return prepare.main(sys.argv[2:])
    register()
    hydra.main(version_base="1.3", config_path=str(conf_dir()), config_name="config")(_job)()
    if "failed" in _statuses:
        return 1
    return 2 if "unsupported" in _statuses else 0


def console_main() -> None:
    sys.exit(main())
