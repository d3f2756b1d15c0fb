import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

import bench
from bench import app, config


def make_run(*overrides):
    """The run dict the orchestrator would hand a worker, composed from the real configs."""
    config.register()
    with initialize_config_dir(config_dir=str(bench.conf_dir()), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["framework=keras", *overrides])
    return app.worker_run(OmegaConf.to_object(cfg), {"arrays": {}, "limits": {}})


@pytest.fixture
def run_bench(tmp_path_factory, tmp_path):
    """`python -m bench ...` in a subprocess; returns (returncode, output, result dict)."""
    env = dict(os.environ, BENCH_CACHE_DIR=str(tmp_path_factory.getbasetemp() / "cache"))

    def run(*args, timeout=900):
        proc = subprocess.run([sys.executable, "-m", "bench", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=timeout)
        paths = re.findall(r"^result: (.+)$", proc.stdout, re.M)
        result = json.loads(Path(paths[-1]).read_text()) if paths else None
        return proc.returncode, proc.stdout + proc.stderr, result

    return run
