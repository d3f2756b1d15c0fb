"""bench_chainer declares what conf/framework/chainer.yaml and chainer_ideep.yaml declare
(read without chainer)."""
import pytest

import bench_chainer
from bench import capabilities


@pytest.mark.parametrize("framework,module", [("chainer", "chainer"),
                                              ("chainer_ideep", "ideep4py")])
def test_capabilities_agree_with_the_config_file(framework, module):
    declared = capabilities.declared(framework)
    assert bench_chainer.CAPABILITIES == declared["capabilities"]
    assert set(bench_chainer.OPTIONS) == set(declared["options"])
    assert declared["package"] == "bench_chainer" and declared["module"] == module


def test_ideep_is_a_named_variant_never_a_silent_default():
    assert capabilities.declared("chainer")["options"]["use_ideep"] == "never"
    assert capabilities.declared("chainer_ideep")["options"]["use_ideep"] == "auto"
