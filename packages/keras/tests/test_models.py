"""The Keras models against SPEC and the NumPy reference, with neutral weights."""
import numpy as np
import pytest

import bench_keras
from bench import testing
from bench_keras import cnn, resnet50, rnn
from bench_shared import reference, reference_train, spec

MODULES = {"cnn": cnn, "resnet50": resnet50, "rnn": rnn}


def loaded_model(task, *overrides):
    return testing.loaded_model("keras", task, *overrides)


def native(task, x):
    return MODULES[task].native_layout(x) if hasattr(MODULES[task], "native_layout") else x


@pytest.mark.parametrize("task", sorted(MODULES))
def test_parameter_count_and_reference_forward(task):
    _, model, params = loaded_model(task)
    assert bench_keras.count_parameters(model) == spec.TASKS[task].param_count
    inputs = reference.fixed_inputs(task)
    out = MODULES[task].predict(model, [native(task, inputs)])
    assert reference.relative_error(out, reference.forward(task, params, inputs)) < 1e-5


def test_keras_resnet50_counts_its_conv_biases_apart():
    _, model, _ = loaded_model("resnet50")
    keras_count = sum(int(np.prod(v.shape)) for v in model.trainable_weights)
    assert keras_count - spec.ResNet50.param_count == 26560  # one bias per conv output channel
    assert len(model.spec_excluded) == 53  # every convolution of ResNet-50


@pytest.mark.parametrize("task", sorted(MODULES))
def test_export_returns_the_loaded_weights(task):
    _, model, params = loaded_model(task)
    exported = MODULES[task].export_weights(model)
    assert list(exported) == list(params)
    assert all(np.array_equal(exported[k], params[k]) for k in params)


@pytest.mark.parametrize("task", ["cnn", "rnn"])
def test_fit_steps_follow_the_reference(task):
    run, model, params = loaded_model(task)
    batches = reference_train.fixed_batches(task, 6, batch_size=8)
    expected = reference_train.train_steps(task, params, batches, run["task"]["optimizer"])
    losses = [MODULES[task].train_epoch(model, [(native(task, x), y)]) for x, y in batches]
    np.testing.assert_allclose(losses, expected, rtol=1e-3)
