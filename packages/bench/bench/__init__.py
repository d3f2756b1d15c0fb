"""Rosetta Bench orchestrator: configs, data, environments, workers, results.

It never imports a deep-learning framework: every benchmark runs in a worker process started
with the Python of that framework's own environment.
"""

import os
from pathlib import Path

__version__ = "0.1.0"

_HERE = Path(__file__).resolve().parent


def conf_dir() -> Path:
    """The Hydra config directory: $BENCH_CONF_DIR, the checkout's conf/, or the installed copy."""
    for candidate in (os.environ.get("BENCH_CONF_DIR"), _HERE.parents[2] / "conf", _HERE / "conf"):
        if candidate and (Path(candidate) / "config.yaml").is_file():
            return Path(candidate)
    raise FileNotFoundError("bench cannot find its conf/ directory; set BENCH_CONF_DIR")


def project_dir() -> Path:
    """Where `nox` builds the framework environments (.nox/): $BENCH_PROJECT_DIR, the checkout
    holding conf/, else the nearest parent of the working directory with a noxfile.py."""
    if os.environ.get("BENCH_PROJECT_DIR"):
        return Path(os.environ["BENCH_PROJECT_DIR"])
    checkout = _HERE.parents[2]
    if (checkout / "noxfile.py").is_file():
        return checkout
    cwd = Path.cwd()
    return next((p for p in (cwd, *cwd.parents) if (p / "noxfile.py").is_file()), cwd)
