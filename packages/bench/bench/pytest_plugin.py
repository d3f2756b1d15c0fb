"""Fixtures for every framework package's tests, loaded by pytest wherever `bench` is installed
(its `pytest11` entry point): the real CLI in a subprocess. Importing it imports no framework."""

import pytest

from . import testing


@pytest.fixture
def run_bench(tmp_path_factory, tmp_path):
    """`python -m bench ...` in a subprocess, in a fresh directory with a data cache shared by
    the session's tests; returns (exit status, output, the last result or None)."""
    cache = tmp_path_factory.getbasetemp() / "cache"
    return lambda *args, timeout=900: testing.run_cli(args, tmp_path, cache, timeout)
