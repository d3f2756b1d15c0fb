"""The TensorFlow models against SPEC and the NumPy reference, with neutral weights."""
import numpy as np
import pytest

import bench_tensorflow
from bench import testing
from bench_shared import reference, reference_train, spec
from bench_tensorflow import cnn, resnet50, rnn

MODULES = {"cnn": cnn, "resnet50": resnet50, "rnn": rnn}


def loaded_model(task, *overrides):
    return testing.loaded_model("tensorflow", task, *overrides)


def inputs_for(task):
    x = reference.fixed_inputs(task)
    return MODULES[task].native_layout(x) if hasattr(MODULES[task], "native_layout") else x


@pytest.mark.parametrize("task", sorted(MODULES))
def test_parameter_count_and_reference_forward(task):
    _, model, params = loaded_model(task)
    assert bench_tensorflow.count_parameters(model) == spec.TASKS[task].param_count
    out = MODULES[task].predict(model, [inputs_for(task)])
    expected = reference.forward(task, params, reference.fixed_inputs(task))
    assert reference.relative_error(out, expected) < 1e-5


@pytest.mark.parametrize("task", sorted(MODULES))
def test_export_returns_the_loaded_weights(task):
    _, model, params = loaded_model(task)
    exported = MODULES[task].export_weights(model)
    assert list(exported) == list(params)
    assert all(np.array_equal(exported[k], params[k]) for k in params)


@pytest.mark.parametrize("task", ["cnn", "rnn"])
def test_training_steps_follow_the_reference(task):
    run, model, params = loaded_model(task)
    batches = reference_train.fixed_batches(task, 6, batch_size=8)
    expected = reference_train.train_steps(task, params, batches, run["task"]["optimizer"])
    native = [(cnn.native_layout(x) if task == "cnn" else x, y) for x, y in batches]
    losses = [MODULES[task].train_epoch(model, [b]) for b in native]
    np.testing.assert_allclose(losses, expected, rtol=1e-3)


def test_keras_gru_gate_order_is_converted():
    _, model, params = loaded_model("rnn")
    kernel = model.net.gru.cell.kernel.numpy()
    units = spec.RNN.hidden_units
    # Keras stores z, r, n: its first block is the neutral format's second (z)
    assert np.array_equal(kernel[:, :units], params["gru.input_weight"][:, units:2 * units])
