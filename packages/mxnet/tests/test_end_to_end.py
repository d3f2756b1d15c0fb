"""`python -m bench framework=gluon|mxnet ...` end to end, what is MXNet's own: bf16 through
AMP and the engine variables set before `import mxnet`. Learning, ResNet-50 in fp32 and the
refusals declared in the YAML are checked by the shared suites."""

import pytest

from bench_mxnet import runtime
from bench_shared import spec


@pytest.mark.parametrize("framework", ["gluon", "mxnet"])
def test_resnet50_inference_in_bf16(run_bench, framework):
    code, output, result = run_bench(
        f"framework={framework}",
        "task=resnet50",
        "preset=smoke",
        "precision=bf16",
        "task.batch_size=16",
    )
    if "avx512f" not in runtime.cpu_flags():  # oneDNN's bf16 kernels need AVX-512
        assert code == 2 and result["status"] == "unsupported", output
        assert "bf16 kernels need AVX-512 (avx512f), which this CPU lacks" in result["error"]
        return
    if runtime.isa_cap() in runtime.BELOW_AVX512:  # a better CPU forced down to AVX2
        assert code == 2 and result["status"] == "unsupported", output
        assert "with oneDNN capped at" in result["error"]
        return
    assert code == 0, output
    assert result["param_count"] == spec.ResNet50.param_count
    assert result["features"]["finite"] and result["features"]["std"] > 0
    settings = result["framework"]["settings"]
    assert settings["amp"] == "bfloat16"
    assert settings["environment"]["OMP_NUM_THREADS"] == str(settings["threads"])
