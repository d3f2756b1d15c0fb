"""A bundle fit to rank, made once per test module by real runs of the numpy stand-in: the
fake CNN, three seeds, from a clean git checkout and a lock-built environment, two epochs
dominated by a sleep (8 batches of 100 ms) so that the repeats stay close on a busy machine
(the check is given what three such runs on a loaded machine can meet: LIMITS, three undisturbed
runs where a ranking asks six, and a median interval of up to 100 %)."""

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from locked_env import FAKE, git_project, locked_environment

RUN = [
    "framework=fake",
    "task=cnn",
    "preset=smoke",
    "preset.train_examples=512",
    "preset.epochs=2",  # the steady state: the second epoch
    "framework.options.delay_ms=100",
]
LIMITS = ("--min-runs", "3", "--max-interval", "1.0")  # three repeats; within a factor of two


@dataclass
class Bundle:
    env: dict  # for the CLI: the fake runs from the lock-built environment
    site: Path  # that environment's site-packages
    project: Path  # a clean git checkout
    cwd: Path
    results: list  # the three result.json paths

    def bench(self, *args, env=None, cwd=None):
        return subprocess.run(
            [sys.executable, "-m", "bench", *map(str, args)],
            cwd=cwd or self.cwd,
            env=env or self.env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    def run(self, *overrides, into, env=None):
        """One more run of RUN (with overrides) into the directory `into`; its result path."""
        done = self.bench(*RUN, *overrides, f"hydra.run.dir={into}", env=env)
        assert (Path(into) / "result.json").is_file(), done.stdout + done.stderr
        return Path(into) / "result.json"

    def copy(self, to: Path):
        """The bundle's results under `to` (one directory per run); the new directory."""
        for i, path in enumerate(self.results):
            (to / f"seed{i}").mkdir(parents=True)
            shutil.copy(path, to / f"seed{i}" / "result.json")
        return to


@pytest.fixture(scope="module")
def fit_bundle(conf_copy, cache_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("bundle")
    project = root / "project"
    git_project(project)
    env = dict(
        __import__("os").environ,
        BENCH_CONF_DIR=str(conf_copy),
        BENCH_CACHE_DIR=str(cache_dir),
        BENCH_PROJECT_DIR=str(project),
        PYTHONPATH=str(FAKE),
    )
    env, site = locked_environment(env)
    bundle = Bundle(env, site, project, root, [])
    for seed in range(3):
        bundle.results.append(bundle.run(f"seed={seed}", into=root / "bundle" / f"seed{seed}"))
    for path in bundle.results:
        result = json.loads(path.read_text())
        assert result["status"] == "ok" and result["environment"]["status"] == "locked"
    return bundle
