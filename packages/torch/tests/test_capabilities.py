"""bench_torch declares what conf/framework/torch.yaml declares (read without torch)."""
import bench_torch
from bench import capabilities


def test_capabilities_agree_with_the_config_file():
    declared = capabilities.declared("torch")
    assert bench_torch.CAPABILITIES == declared["capabilities"]
    assert set(bench_torch.OPTIONS) == set(declared["options"])
    assert declared["package"] == "bench_torch" and declared["module"] == "torch"
