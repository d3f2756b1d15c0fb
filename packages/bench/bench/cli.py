"""`python -m bench`: Hydra turns the command line into typed configs for bench.app;
`python -m bench prepare ...` only prepares data (bench.prepare), `python -m bench verify`
runs the equivalence check (bench.verify)."""
import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from . import app, conf_dir
from .config import register

_statuses = []  # one per job of this process (a multirun with the basic launcher runs them all)


def _job(cfg: DictConfig) -> None:
    typed = OmegaConf.to_object(cfg)
    run_dir = Path(HydraConfig.get().runtime.output_dir)
    result = app.run_benchmark(typed, OmegaConf.to_container(cfg, resolve=True), run_dir)
    _statuses.append(result["status"])


SUBCOMMANDS = {"verify": "bench.verify", "prepare": "bench.prepare"}


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] in SUBCOMMANDS:  # not a benchmark run: no Hydra
        import importlib

        return importlib.import_module(SUBCOMMANDS[sys.argv[1]]).main(sys.argv[2:])
    register()
    hydra.main(version_base="1.3", config_path=str(conf_dir()), config_name="config")(_job)()
    if "failed" in _statuses:
        return 1
    return 2 if "unsupported" in _statuses else 0


def console_main() -> None:
    sys.exit(main())
