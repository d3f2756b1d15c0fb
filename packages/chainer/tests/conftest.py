import functools

import pytest

from bench import testing

make_run = functools.partial(testing.make_run, "chainer")


@pytest.fixture
def run_bench(tmp_path_factory, tmp_path):
    """`python -m bench ...` in a subprocess; returns (returncode, output, result dict)."""
    cache = tmp_path_factory.getbasetemp() / "cache"
    return lambda *args, timeout=900: testing.run_cli(args, tmp_path, cache, timeout)
