"""Fixtures for the tests against a real Slurm: a one-host cluster (cluster.py) started once
per session, stopped at its end whatever happened, and the orchestrator's own test fixtures
(packages/bench/tests/conftest.py: the fake framework in a copy of conf/, a private cache),
whose processes reach the cluster through SLURM_CONF. The fake framework's package is found
through PYTHONPATH on the "nodes" too: they are this host."""

import importlib.util
import os
import shutil
import sys
from pathlib import Path

import pytest

from bench.run import system

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))  # the tests' own helpers (archives.py)
_spec = importlib.util.spec_from_file_location(
    "bench_tests_conftest", HERE.parent / "tests" / "conftest.py"
)
_tests = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_tests)
conf_copy, cache_dir, bench_env = _tests.conf_copy, _tests.cache_dir, _tests.bench_env
Run, assert_follows_schema = _tests.Run, _tests.assert_follows_schema

import cluster  # noqa: E402  (beside this file)


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory):
    missing = system.missing("slurm")
    if missing:
        pytest.skip(missing)
    if os.geteuid() != 0:
        pytest.skip("the one-host Slurm cluster runs its own slurmd and munged: root only")
    root = tmp_path_factory.mktemp("slurm")
    running = cluster.Cluster(root)
    try:
        yield running.start()
    finally:
        running.stop()
        shutil.rmtree(root / "state", ignore_errors=True)
        shutil.rmtree(root / "spool", ignore_errors=True)


@pytest.fixture
def slurm_env(bench_env, slurm_cluster):
    """The tests' environment with this cluster's SLURM_CONF and none of the SLURM_* variables
    of a job that may be running the tests."""
    env = {k: v for k, v in bench_env.items() if not k.startswith("SLURM")}
    env.update(PATH=slurm_cluster.env["PATH"], SLURM_CONF=str(slurm_cluster.conf))
    return env
