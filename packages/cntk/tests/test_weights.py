"""Neutral weights in CNTK: the NumPy reference's outputs and training trajectories."""
import numpy as np
import pytest
from conftest import loaded_model

from bench_cntk import cnn, common, resnet50, rnn
from bench_shared import reference, reference_train, weights

MODULES = {"cnn": cnn, "resnet50": resnet50, "rnn": rnn}


@pytest.mark.parametrize("task", sorted(MODULES))
def test_reference_forward_equals_cntk(task):
    _, model, params = loaded_model(task)
    inputs = reference.fixed_inputs(task)
    out = MODULES[task].predict(model, [inputs])
    assert reference.relative_error(out, reference.forward(task, params, inputs)) < 1e-5


@pytest.mark.parametrize("task", sorted(MODULES))
def test_export_returns_the_loaded_weights(task):
    _, model, params = loaded_model(task)
    exported = MODULES[task].export_weights(model)
    assert list(exported) == list(params)
    assert all(np.array_equal(exported[k], params[k]) for k in params)


@pytest.mark.parametrize("task", ["cnn", "rnn"])
def test_reference_training_equals_cntk(task):
    run, model, params = loaded_model(task)
    batches = reference_train.fixed_batches(task, 8, batch_size=8)
    expected = reference_train.train_steps(task, params, batches, run["task"]["optimizer"])
    losses = [MODULES[task].train_epoch(model, [b]) for b in batches]
    np.testing.assert_allclose(losses, expected, rtol=1e-4)
    assert losses[-1] != losses[0]  # it did train


@pytest.mark.parametrize("task,learner", [
    ("cnn", lambda cfg: lambda ps: common.C.momentum_sgd(  # CNTK's default: unit-gain momentum
        ps, common.C.learning_parameter_schedule(cfg["lr"]),
        common.C.momentum_schedule(cfg["momentum"]), unit_gain=True)),
    ("rnn", lambda cfg: lambda ps: common.C.adam(  # lr per minibatch: divided by the batch
        ps, common.C.learning_parameter_schedule(cfg["lr"]),
        common.C.momentum_schedule(cfg["beta1"]),
        variance_momentum=common.C.momentum_schedule(cfg["beta2"]), epsilon=cfg["eps"]))])
def test_the_other_optimiser_conventions_fail_the_check(task, learner):
    run, model, params = loaded_model(task)
    model.trainer = common.C.Trainer(model.net, model.trainer.loss_function,
                                     [learner(run["task"]["optimizer"])(model.net.parameters)])
    batches = reference_train.fixed_batches(task, 8, batch_size=8)
    expected = reference_train.train_steps(task, params, batches, run["task"]["optimizer"])
    losses = [MODULES[task].train_epoch(model, [b]) for b in batches]
    assert np.max(np.abs(np.subtract(losses, expected)) / np.abs(expected)) > 1e-2


def test_a_transposed_kernel_changes_the_output():
    _, model, params = loaded_model("cnn")
    params["conv1.weight"] = params["conv1.weight"].transpose(0, 1, 3, 2).copy()
    cnn.load_weights(model, params)
    inputs = reference.fixed_inputs("cnn")
    expected = reference.forward("cnn", weights.random_weights("cnn"), inputs)
    assert reference.relative_error(cnn.predict(model, [inputs]), expected) > 1e-2
