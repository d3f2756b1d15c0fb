import pytest

from bench import testing
from bench_mxnet import runtime

FRAMEWORKS = ("gluon", "mxnet")  # conf/framework/gluon.yaml, mxnet.yaml: one package

# MXNet reads its thread variables once, at import: apply the default options before any test
# module imports mxnet (every setup() in this process then uses the same ones)
_run = testing.make_run("gluon")
runtime.configure(_run, _run["framework"]["options"])


@pytest.fixture
def run_bench(tmp_path_factory, tmp_path):
    """`python -m bench ...` in a subprocess; returns (returncode, output, result dict)."""
    cache = tmp_path_factory.getbasetemp() / "cache"
    return lambda *args, timeout=900: testing.run_cli(args, tmp_path, cache, timeout)
