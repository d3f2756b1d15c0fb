"""ONNX Runtime for Rosetta Bench: session options, execution providers and the device sync.

An inference runtime: it runs an ONNX graph, it does not train (conf/framework/onnxruntime.yaml
declares resnet50 only). setup() turns the run's options into the SessionOptions and the
provider list every InferenceSession of this worker is created with (loop.Model).
"""

import os

import onnxruntime as ort

from .weights import tensors  # noqa: F401  the model's initializers (weight protocol)

# capabilities and options: conf/framework/onnxruntime.yaml (checked before setup() by the runtime)
OPTIMIZATION_LEVELS = {
    "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "layout": ort.GraphOptimizationLevel.ORT_ENABLE_LAYOUT,
    "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
}
EXECUTION_MODES = {
    "sequential": ort.ExecutionMode.ORT_SEQUENTIAL,
    "parallel": ort.ExecutionMode.ORT_PARALLEL,
}

# the ONNX operator set the graphs are written in: later opsets only widen the types these
# ops accept, and every ONNX Runtime of the last years runs 17
OPSET = 17

_session = {"options": None, "providers": ["CPUExecutionProvider"], "device": ("cpu", 0)}


def session_options():
    """Fresh SessionOptions with the run's settings, one per session (a session may add its
    own, e.g. optimized_model_filepath)."""
    return _session["options"]()


def providers():
    return list(_session["providers"])


def setup(run):
    """The session options and providers of this worker's sessions; what was applied."""
    options = run["framework"]["options"]
    if run["device"]["name"] == "gpu":
        if "CUDAExecutionProvider" not in ort.get_available_providers():
            raise NotImplementedError(
                "device=gpu is not supported by this onnxruntime %s (%s): its providers are %s; "
                "install the CUDA build in its place, BENCH_ONNXRUNTIME_REQUIREMENT="
                "onnxruntime-gpu==<version> nox -s onnxruntime --install-only"
                % (ort.__version__, ort.get_device(), ", ".join(ort.get_available_providers()))
            )
        # CPU after CUDA: ORT places the nodes CUDA lacks there; loop.Model refuses a
        # session that fell back to the CPU as a whole
        index = run["device"]["index"]
        _session["providers"] = [
            ("CUDAExecutionProvider", {"device_id": index}),
            "CPUExecutionProvider",
        ]
        _session["device"] = ("cuda", index)
    else:
        _session["providers"] = ["CPUExecutionProvider"]
        _session["device"] = ("cpu", 0)
    threads = options["threads"] or len(os.sched_getaffinity(0))

    def make():
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads  # ORT's 0 means its own choice: set, so recorded
        so.inter_op_num_threads = options["interop_threads"]  # used by execution_mode=parallel
        so.execution_mode = EXECUTION_MODES[options["execution_mode"]]
        # Conv+BatchNormalization folding, Conv+Relu fusion, NCHWc layouts: applied once, when
        # the session is created (in the untimed warm-up pass, like torch.compile)
        so.graph_optimization_level = OPTIMIZATION_LEVELS[options["graph_optimization"]]
        # denormals cost ~100x on x86 CPUs; a random-weight ResNet produces them
        so.add_session_config_entry(
            "session.set_denormal_as_zero", "1" if options["denormal_as_zero"] else "0"
        )
        return so

    _session["options"] = make
    so = make()
    settings = {
        "device": run["device"]["name"],
        "providers": [p if isinstance(p, str) else p[0] for p in _session["providers"]],
        "threads": so.intra_op_num_threads,
        "interop_threads": so.inter_op_num_threads,
        "execution_mode": str(so.execution_mode).split(".")[-1],
        "graph_optimization_level": str(so.graph_optimization_level).split(".")[-1],
    }
    settings.update({k: v for k, v in options.items() if k not in settings})
    return settings


def versions():
    import onnx

    return {
        "onnxruntime": ort.__version__,
        "onnx": onnx.__version__,
        "device": ort.get_device(),
        "available_providers": ort.get_available_providers(),
    }


def sync():
    """InferenceSession.run returns host arrays: nothing is left queued on the device."""


def count_parameters(model):
    """Convolution kernels and batch norm's scale and bias (SPEC's PyTorch convention): every
    initializer but the running statistics."""
    return sum(
        int(v.size)
        for k, v in model.initializers.items()
        if not k.endswith((".input_mean", ".input_var"))
    )


def memory_stats():
    """None: ORT's Python API exposes no peak of its device allocator."""
    return None


def peak_flops(precision, size=2048):
    """Measured dense matrix-multiply throughput of a one-node session with the run's options
    and providers (FLOP/s; int8: operations/s): the denominator of the utilisation figure.
    fp32: MatMul; int8: the same product as a 1x1 QLinearConv (uint8 pixels, int8 weights,
    `size` channels in and out over `size` pixels), the kernel the int8 model runs, which
    measured above MatMulInteger's int32 product. The input and output stay on the device (I/O
    binding). None at a precision the model does not run here. Run after the benchmark,
    untimed."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    from bench_shared.timing import matmul_flops, peak_rate

    if precision not in ("fp32", "int8"):
        return None
    rng = np.random.RandomState(0)
    if precision == "int8":
        shape = [1, size, 32, size // 32]  # NCHW: size channels, size pixels
        constants = [("w", rng.randint(-127, 128, (size, size, 1, 1)).astype(np.int8))] + [
            (name, np.array(value, dtype))
            for name, value, dtype in (
                ("x_scale", 0.01, np.float32),
                ("x_zero", 0, np.uint8),
                ("w_scale", 0.01, np.float32),
                ("w_zero", 0, np.int8),
                ("y_scale", 0.1, np.float32),
                ("y_zero", 0, np.uint8),
            )
        ]
        node = helper.make_node(
            "QLinearConv",
            ["a", "x_scale", "x_zero", "w", "w_scale", "w_zero", "y_scale", "y_zero"],
            ["c"],
        )
        inputs = {"a": (TensorProto.UINT8, shape, rng.randint(0, 256, shape).astype(np.uint8))}
        output = (TensorProto.UINT8, shape)
    else:
        constants = []
        node = helper.make_node("MatMul", ["a", "b"], ["c"])
        inputs = {
            n: (TensorProto.FLOAT, [size, size], rng.randn(size, size).astype(np.float32))
            for n in "ab"
        }
        output = (TensorProto.FLOAT, [size, size])
    graph = helper.make_graph(
        [node],
        "matmul",
        [helper.make_tensor_value_info(n, t, shape) for n, (t, shape, _) in inputs.items()],
        [helper.make_tensor_value_info("c", *output)],
        initializer=[numpy_helper.from_array(value, name) for name, value in constants],
    )
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    session = ort.InferenceSession(proto.SerializeToString(), session_options(), providers())
    device, index = _session["device"]
    binding = session.io_binding()
    for name, (_, _, value) in inputs.items():
        binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(value, device, index))
    binding.bind_output("c", device, index)

    def work(n):
        for _ in range(n):
            session.run_with_iobinding(binding)
        binding.synchronize_outputs()

    return peak_rate(work, matmul_flops(size))
