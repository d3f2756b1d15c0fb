"""What is MXNet's own in the weight protocol: the Module API's packed GRU vector (its order
and layout) and the GRU gate order in both API styles. Loading, export round trips and the
equivalence with the NumPy reference are the shared conformance suite's."""

import importlib

import numpy as np
import pytest
from conftest import FRAMEWORKS

from bench import testing
from bench_shared import reference, slots, spec, weights


def test_gru_vector_is_packed_in_fused_rnn_order():
    _, model, params = testing.loaded_model("mxnet", "rnn")
    vector = model.mod.get_params()[0]["gru_parameters"].asnumpy()
    e, h = spec.RNN.embedding_dim, spec.RNN.hidden_units
    # input weights as (3H, E), gate r first; then recurrent (3H, H); then the two biases
    np.testing.assert_array_equal(vector[:e], params["gru.input_weight"][:, 0])
    recurrent = vector[3 * h * e : 3 * h * (e + h)].reshape(3 * h, h)
    np.testing.assert_array_equal(recurrent, params["gru.recurrent_weight"].T)
    np.testing.assert_array_equal(vector[-3 * h :], params["gru.recurrent_bias"])


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_swapped_gates_change_the_output(framework):
    run, model, params = testing.loaded_model(framework, "rnn")
    package = importlib.import_module(run["framework"]["package"])
    rnn = importlib.import_module(package.__name__ + ".rnn")
    h = spec.RNN.hidden_units
    for name in ("gru.input_weight", "gru.recurrent_weight"):  # r and z swapped
        w = params[name]
        params[name] = np.concatenate([w[:, h : 2 * h], w[:, :h], w[:, 2 * h :]], axis=1)
    slots.load_into(package, rnn, "rnn", model, params)
    inputs = reference.fixed_inputs("rnn")
    expected = reference.forward("rnn", weights.random_weights("rnn"), inputs)
    assert reference.relative_error(rnn.predict(model, [inputs]), expected) > 1e-2
