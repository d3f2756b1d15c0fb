"""bench_chainer declares what conf/framework/chainer.yaml declares (read without chainer)."""
import bench_chainer
from bench import capabilities


def test_capabilities_agree_with_the_config_file():
    declared = capabilities.declared("chainer")
    assert bench_chainer.CAPABILITIES == declared["capabilities"]
    assert set(bench_chainer.OPTIONS) == set(declared["options"])
    assert declared["package"] == "bench_chainer" and declared["module"] == "chainer"
