"""What is ONNX Runtime's own: the graph as ONNX nodes, what its graph optimiser makes of it,
the session options it runs with, and the initializers behind the weight protocol. SPEC's
counts and the equivalence with the NumPy reference are the shared conformance suite's
(shared/tests/test_conformance.py)."""

import collections

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from conftest import make_run

import bench_onnxruntime
from bench_onnxruntime import resnet50
from bench_shared import contract, reference, slots, spec, weights


def built(*overrides):
    run = make_run("task=resnet50", *overrides)
    settings = bench_onnxruntime.setup(run)
    return settings, resnet50.build_model(run)


def op_counts(graph):
    return collections.Counter(n.op_type for n in graph.node)


def test_graph_is_v1_with_batch_norm_nodes_and_a_free_batch_dimension():
    _, model = built()
    proto = model.proto()
    nodes = {n.name: n for n in proto.graph.node}
    strides = {
        n: [a.ints for a in nodes[n].attribute if a.name == "strides"][0]
        for n in ("stage2.block0.conv1", "stage2.block0.conv2")
    }
    assert strides == {"stage2.block0.conv1": [2, 2], "stage2.block0.conv2": [1, 1]}  # v1
    assert op_counts(proto.graph) == {
        "Conv": 53,
        "BatchNormalization": 53,
        "Relu": 49,
        "Add": 16,
        "MaxPool": 1,
        "GlobalAveragePool": 1,
        "Flatten": 1,
    }
    (images,), (features,) = proto.graph.input, proto.graph.output
    dims = [d.dim_param or d.dim_value for d in images.type.tensor_type.shape.dim]
    assert dims == ["batch", 3, 224, 224]
    assert [d.dim_param or d.dim_value for d in features.type.tensor_type.shape.dim] == [
        "batch",
        2048,
    ]
    running = sum(
        v.size for k, v in model.initializers.items() if k.endswith((".input_mean", ".input_var"))
    )
    assert running == spec.ResNet50.buffer_count


@pytest.mark.parametrize("level,batch_norms", [("disable", 53), ("basic", 0)])
def test_the_optimiser_folds_batch_norm_into_the_convolutions(tmp_path, level, batch_norms):
    _, model = built(f"framework.options.graph_optimization={level}")
    path = str(tmp_path / "optimized.onnx")
    model.session(optimized_model_path=path)
    assert op_counts(onnx.load(path).graph)["BatchNormalization"] == batch_norms


def test_all_optimisations_use_nchwc_convolutions_and_change_no_output(tmp_path):
    path, x = str(tmp_path / "optimized.onnx"), reference.fixed_inputs("resnet50", batch=2)
    params = weights.random_weights("resnet50", seed=0)
    outputs = {}
    for level in ("disable", "all"):
        _, model = built(f"framework.options.graph_optimization={level}")
        slots.load_into(bench_onnxruntime, resnet50, "resnet50", model, params)
        outputs[level] = resnet50.predict(model, [x])
    model.session(optimized_model_path=path)
    domains = {(n.domain, n.op_type) for n in onnx.load(path).graph.node}
    assert ("com.microsoft.nchwc", "Conv") in domains
    error = reference.relative_error(outputs["all"], outputs["disable"])
    assert 0 <= error < 1e-5


def test_loading_weights_after_a_prediction_makes_a_new_session():
    """The initializers live in the model; a stale session would keep predicting with the old."""
    _, model = built()
    x = reference.fixed_inputs("resnet50", batch=2)
    before = resnet50.predict(model, [x])
    params = weights.random_weights("resnet50", seed=0)
    slots.load_into(bench_onnxruntime, resnet50, "resnet50", model, params)
    after = resnet50.predict(model, [x])
    assert not np.allclose(before, after)
    assert reference.relative_error(after, reference.forward("resnet50", params, x)) < 1e-5
    exported = slots.export_from(bench_onnxruntime, resnet50, "resnet50", model)
    with pytest.raises(ValueError):  # a read-only view: an export cannot alter the model
        exported["stem.conv.weight"][0, 0, 0, 0] = 1.0


def test_session_runs_with_the_options_it_records():
    settings, model = built(
        "framework.options.threads=1",
        "framework.options.interop_threads=2",
        "framework.options.execution_mode=parallel",
    )
    assert (settings["threads"], settings["interop_threads"]) == (1, 2)
    assert settings["execution_mode"] == "ORT_PARALLEL"
    assert settings["providers"] == ["CPUExecutionProvider"]
    options = model.session().get_session_options()
    assert (options.intra_op_num_threads, options.inter_op_num_threads) == (1, 2)
    assert str(options.graph_optimization_level).endswith("ORT_ENABLE_ALL")
    assert options.get_session_config_entry("session.set_denormal_as_zero") == "1"
    assert model.session().get_providers() == ["CPUExecutionProvider"]


def test_training_tasks_are_refused_as_an_inference_runtime():
    run = make_run("task=cnn")
    with pytest.raises(NotImplementedError) as refused:
        contract.check_run(run)
    assert "inference runtime" in str(refused.value) and "supported tasks: resnet50" in str(
        refused.value
    )


@pytest.mark.skipif(
    "CUDAExecutionProvider" in ort.get_available_providers(),
    reason="this onnxruntime has the CUDA provider",
)
def test_gpu_without_the_cuda_provider_says_what_to_install():
    with pytest.raises(NotImplementedError) as refused:
        bench_onnxruntime.setup(make_run("task=resnet50", "device=gpu"))
    assert "onnxruntime-gpu" in str(refused.value)


def test_int8_runs_quantized_convolutions_calibrated_on_the_images(tmp_path):
    """precision=int8: calibrate() makes a QDQ graph whose pairs the session's optimiser fuses
    into int8 QLinearConv kernels; its outputs are near, never equal to, fp32's; and loading
    weights into a quantized model is refused (its ranges were calibrated for the old ones)."""
    _, model = built("precision=int8")
    params = weights.random_weights("resnet50", seed=0)
    slots.load_into(bench_onnxruntime, resnet50, "resnet50", model, params)
    x = reference.distinct_images(2, seed=1)
    fp32 = resnet50.predict(model, [x])
    model = resnet50.calibrate(model, [reference.distinct_images(4, seed=2)])
    assert op_counts(model.quantized.graph)["QuantizeLinear"] > 50
    path = str(tmp_path / "optimized.onnx")
    model.session(optimized_model_path=path)
    assert op_counts(onnx.load(path).graph)["QLinearConv"] == 53
    error = reference.relative_error(resnet50.predict(model, [x]), fp32)
    assert 1e-3 < error < 0.3
    with pytest.raises(ValueError, match="load its weights before calibrate"):
        slots.load_into(bench_onnxruntime, resnet50, "resnet50", model, params)


def test_int8_peak_is_an_integer_product():
    bench_onnxruntime.setup(make_run("task=resnet50"))
    assert bench_onnxruntime.peak_flops("int8") > 0
    assert bench_onnxruntime.peak_flops("bf16") is None  # no bf16 kernels on the CPU
