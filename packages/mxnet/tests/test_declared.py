"""bench_mxnet.gluon and bench_mxnet.module declare what conf/framework/gluon.yaml and
mxnet.yaml declare (read without mxnet)."""
import pytest

import bench_mxnet.gluon
import bench_mxnet.module
from bench import capabilities

PACKAGES = {"gluon": bench_mxnet.gluon, "mxnet": bench_mxnet.module}


@pytest.mark.parametrize("framework", sorted(PACKAGES))
def test_capabilities_agree_with_the_config_file(framework):
    declared = capabilities.declared(framework)
    package = PACKAGES[framework]
    assert package.CAPABILITIES == declared["capabilities"]
    assert set(package.OPTIONS) == set(declared["options"])
    assert declared["package"] == package.__name__ and declared["module"] == "mxnet"
    assert declared["nox_session"] == "mxnet"
