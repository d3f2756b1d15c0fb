"""Neutral weights in Gluon and in the Module API: outputs and training steps equal the NumPy
reference, export returns what was loaded, and a wrong layout is caught."""
import importlib

import numpy as np
import pytest
from conftest import FRAMEWORKS

from bench import testing
from bench_mxnet import weights as mxnet_weights
from bench_shared import reference, reference_train, spec, weights


def loaded(framework, task):
    run, model, params = testing.loaded_model(framework, task)
    return run, importlib.import_module(f"{run['framework']['package']}.{task}"), model, params


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("task", sorted(spec.TASKS))
def test_reference_forward_and_export(framework, task):
    _, module, model, params = loaded(framework, task)
    inputs = reference.fixed_inputs(task)
    out = module.predict(model, [inputs])
    assert reference.relative_error(out, reference.forward(task, params, inputs)) < 1e-5
    exported = module.export_weights(model)
    assert list(exported) == list(params)
    assert all(np.array_equal(exported[k], params[k]) for k in params)


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("task", ["cnn", "rnn"])
def test_reference_training(framework, task):
    run, module, model, params = loaded(framework, task)
    batches = reference_train.fixed_batches(task, 6, batch_size=8)
    expected = reference_train.train_steps(task, params, batches, run["task"]["optimizer"])
    losses = [module.train_epoch(model, [b]) for b in batches]
    # MXNet's Adam scales eps by sqrt(1 - beta2^t) (bias correction folded into the step)
    np.testing.assert_allclose(losses, expected, rtol=1e-4)
    assert losses[-1] != losses[0]  # it did train


def test_gru_packing_round_trip_and_order():
    params = weights.random_weights("rnn")
    vector = mxnet_weights.pack_gru(params)
    # the packed vector starts with the input weights as (3H, E), gate r first
    np.testing.assert_array_equal(vector[:125], params["gru.input_weight"][:, 0])
    unpacked = mxnet_weights.unpack_gru(vector, weights.layout("rnn"))
    assert all(np.array_equal(unpacked[k], params[k]) for k in unpacked)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_swapped_gates_change_the_output(framework):
    _, rnn, model, params = loaded(framework, "rnn")
    h = spec.RNN.hidden_units
    for name in ("gru.input_weight", "gru.recurrent_weight"):  # r and z swapped
        w = params[name]
        params[name] = np.concatenate([w[:, h:2 * h], w[:, :h], w[:, 2 * h:]], axis=1)
    rnn.load_weights(model, params)
    inputs = reference.fixed_inputs("rnn")
    expected = reference.forward("rnn", weights.random_weights("rnn"), inputs)
    assert reference.relative_error(rnn.predict(model, [inputs]), expected) > 1e-2
