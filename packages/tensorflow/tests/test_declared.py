"""bench_tensorflow declares what conf/framework/tensorflow.yaml declares."""
import bench_tensorflow
from bench import capabilities


def test_capabilities_agree_with_the_config_file():
    declared = capabilities.declared("tensorflow")
    assert bench_tensorflow.CAPABILITIES == declared["capabilities"]
    assert set(bench_tensorflow.OPTIONS) == set(declared["options"])
    assert declared["package"] == "bench_tensorflow" and declared["module"] == "tensorflow"
