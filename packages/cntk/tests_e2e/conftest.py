"""The orchestrator's side of CNTK: these tests run in the orchestrator's interpreter (nox
session cntk_e2e), which discovers the Python 3.6 environment `nox -s cntk` built."""
import functools

import pytest

from bench import testing

make_run = functools.partial(testing.make_run, "cntk")


@pytest.fixture
def run_bench(tmp_path_factory, tmp_path):
    """`python -m bench ...` in a subprocess; returns (returncode, output, result dict)."""
    cache = tmp_path_factory.getbasetemp() / "cache"
    return lambda *args, timeout=900: testing.run_cli(args, tmp_path, cache, timeout)
