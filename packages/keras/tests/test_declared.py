"""bench_keras declares what conf/framework/keras.yaml declares."""
import bench_keras
from bench import capabilities


def test_capabilities_agree_with_the_config_file():
    declared = capabilities.declared("keras")
    assert bench_keras.CAPABILITIES == declared["capabilities"]
    assert set(bench_keras.OPTIONS) == set(declared["options"])
    assert declared["package"] == "bench_keras" and declared["module"] == "keras"
    assert declared["env"]["KERAS_BACKEND"] == "tensorflow"
