"""The graph builder, the model (graph + initializers + session), the inference loop and the
int8 calibration that every task module shares.

ONNX keeps the weights inside the graph, as initializers. The model holds them as a dict of
NumPy arrays beside the nodes and creates its InferenceSession from both when it first runs;
loading new weights (bench_shared.slots, through weights.tensors' commit) drops the session,
and the next predict() creates one from the new initializers. precision=int8 replaces the
graph by its statically quantized form (calibrate), which later sessions run.
"""

import collections
import os
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime import quantization

from . import OPSET, providers, session_options


class Graph(object):
    """Nodes in execution order, each output named after the node that makes it."""

    def __init__(self):
        self.nodes = []

    def op(self, op_type, inputs, name, **attributes):
        self.nodes.append(helper.make_node(op_type, list(inputs), [name], name=name, **attributes))
        return name


class Model(object):
    """An ONNX graph with one NCHW float32 input (batch dimension free) and one output."""

    def __init__(
        self,
        run,
        graph,
        initializers,
        input_shape,
        output_shape,
        input_name="images",
        output_name="features",
    ):
        self.graph, self.input_name, self.output_name = graph, input_name, output_name
        self.input_shape, self.output_shape = input_shape, output_shape
        self.initializers = collections.OrderedDict(
            (k, np.ascontiguousarray(v, np.float32)) for k, v in initializers.items()
        )
        self.device = run["device"]["name"]
        self.options = run["framework"]["options"]
        self.quantized = None  # the int8 ModelProto, once calibrate() made it
        self._session = None

    def replace(self, updates):
        """New values for some initializers: the next predict() creates a new session."""
        if self.quantized is not None:
            raise ValueError("the model is quantized: load its weights before calibrate()")
        for key, value in updates.items():
            self.initializers[key] = np.ascontiguousarray(value, np.float32)
        self._session = None

    def proto(self):
        """The ONNX model: the graph with the current initializers."""
        graph = helper.make_graph(
            self.graph.nodes,
            "rosetta_bench",
            [
                helper.make_tensor_value_info(
                    self.input_name, TensorProto.FLOAT, ["batch"] + list(self.input_shape)
                )
            ],
            [
                helper.make_tensor_value_info(
                    self.output_name, TensorProto.FLOAT, ["batch"] + list(self.output_shape)
                )
            ],
            initializer=[numpy_helper.from_array(v, k) for k, v in self.initializers.items()],
        )
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="bench_onnxruntime"
        )
        onnx.checker.check_model(model)  # a malformed graph fails here, naming the node
        return model

    def session(self, optimized_model_path=None):
        """The InferenceSession; creating it runs ORT's graph optimisations (untimed warm-up)."""
        if self._session is None or optimized_model_path:
            options = session_options()
            if optimized_model_path:  # for inspecting what the optimiser made of the graph
                options.optimized_model_filepath = optimized_model_path
            proto = self.quantized if self.quantized is not None else self.proto()
            session = ort.InferenceSession(
                proto.SerializeToString(), options, providers=providers()
            )
            wanted = [p if isinstance(p, str) else p[0] for p in providers()]
            if session.get_providers()[0] != wanted[0]:  # ORT falls back to the CPU silently
                raise RuntimeError(
                    "device=%s: ONNX Runtime created the session with %s, not "
                    "%s (its log above says why)"
                    % (self.device, session.get_providers(), wanted[0])
                )
            self._session = session
        return self._session


def predict(model, batches):
    """Outputs for every batch, as host float32 arrays (InferenceSession.run copies them back)."""
    session = model.session()
    outputs = [
        session.run([model.output_name], {model.input_name: np.ascontiguousarray(x, np.float32)})[0]
        for x in batches
    ]
    return np.concatenate(outputs)


CALIBRATION_METHODS = {"minmax": "MinMax", "entropy": "Entropy", "percentile": "Percentile"}


class _Batches(quantization.CalibrationDataReader):
    def __init__(self, model, batches):
        self.feeds = iter(
            [{model.input_name: np.ascontiguousarray(x, np.float32)} for x in batches]
        )

    def get_next(self):
        return next(self.feeds, None)


def calibrate(model, batches):
    """precision=int8: ONNX Runtime's static quantization, as its documentation does it: the
    graph pre-processed (shape inference, BatchNormalization folded into Conv), then
    quantize_static in the QDQ format -- uint8 activations whose ranges the calibrator
    collects from `batches`, int8 weights per output channel (U8S8, the x86 default) -- and
    the session's optimiser fuses each QuantizeLinear/DequantizeLinear pair around a Conv into
    one int8 QLinearConv."""
    options = model.options
    with tempfile.TemporaryDirectory() as directory:
        fp32, prepared = (os.path.join(directory, name) for name in ("fp32.onnx", "pre.onnx"))
        onnx.save(model.proto(), fp32)
        # sympy's symbolic shapes are for dynamic graphs; ONNX's own inference covers this one
        quantization.quant_pre_process(fp32, prepared, skip_symbolic_shape=True)
        quantized = os.path.join(directory, "int8.onnx")
        quantization.quantize_static(
            prepared,
            quantized,
            _Batches(model, batches),
            quant_format=quantization.QuantFormat.QDQ,
            per_channel=options["per_channel"],
            activation_type=quantization.QuantType.QUInt8,
            weight_type=quantization.QuantType.QInt8,
            calibrate_method=getattr(
                quantization.CalibrationMethod, CALIBRATION_METHODS[options["calibration_method"]]
            ),
        )
        model.quantized = onnx.load(quantized)
    model._session = None
    return model
