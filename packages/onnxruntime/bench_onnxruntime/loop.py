"""The graph builder, the model (graph + initializers + session) and the inference loop that
every task module shares.

ONNX keeps the weights inside the graph, as initializers. The model holds them as a dict of
NumPy arrays beside the nodes and creates its InferenceSession from both when it first runs;
loading new weights (bench_shared.slots, through weights.tensors' commit) drops the session,
and the next predict() creates one from the new initializers.
"""
import collections

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from . import OPSET, providers, session_options


class Graph(object):
    """Nodes in execution order, each output named after the node that makes it."""

    def __init__(self):
        self.nodes = []

    def op(self, op_type, inputs, name, **attributes):
        self.nodes.append(helper.make_node(op_type, list(inputs), [name], name=name,
                                           **attributes))
        return name


class Model(object):
    """An ONNX graph with one NCHW float32 input (batch dimension free) and one output."""

    def __init__(self, run, graph, initializers, input_shape, output_shape,
                 input_name="images", output_name="features"):
        self.graph, self.input_name, self.output_name = graph, input_name, output_name
        self.input_shape, self.output_shape = input_shape, output_shape
        self.initializers = collections.OrderedDict(
            (k, np.ascontiguousarray(v, np.float32)) for k, v in initializers.items())
        self.device = run["device"]["name"]
        self._session = None

    def replace(self, updates):
        """New values for some initializers: the next predict() creates a new session."""
        for key, value in updates.items():
            self.initializers[key] = np.ascontiguousarray(value, np.float32)
        self._session = None

    def proto(self):
        """The ONNX model: the graph with the current initializers."""
        graph = helper.make_graph(
            self.graph.nodes, "rosetta_bench",
            [helper.make_tensor_value_info(self.input_name, TensorProto.FLOAT,
                                           ["batch"] + list(self.input_shape))],
            [helper.make_tensor_value_info(self.output_name, TensorProto.FLOAT,
                                           ["batch"] + list(self.output_shape))],
            initializer=[numpy_helper.from_array(v, k) for k, v in self.initializers.items()])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="bench_onnxruntime")
        onnx.checker.check_model(model)  # a malformed graph fails here, naming the node
        return model

    def session(self, optimized_model_path=None):
        """The InferenceSession; creating it runs ORT's graph optimisations (untimed warm-up)."""
        if self._session is None or optimized_model_path:
            options = session_options()
            if optimized_model_path:  # for inspecting what the optimiser made of the graph
                options.optimized_model_filepath = optimized_model_path
            session = ort.InferenceSession(self.proto().SerializeToString(), options,
                                           providers=providers())
            wanted = [p if isinstance(p, str) else p[0] for p in providers()]
            if session.get_providers()[0] != wanted[0]:  # ORT falls back to the CPU silently
                raise RuntimeError("device=%s: ONNX Runtime created the session with %s, not "
                                   "%s (its log above says why)" % (
                                       self.device, session.get_providers(), wanted[0]))
            self._session = session
        return self._session


def predict(model, batches):
    """Outputs for every batch, as host float32 arrays (InferenceSession.run copies them back)."""
    session = model.session()
    outputs = [session.run([model.output_name],
                           {model.input_name: np.ascontiguousarray(x, np.float32)})[0]
               for x in batches]
    return np.concatenate(outputs)
