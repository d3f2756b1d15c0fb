"""What is Keras' own in its models, on this session's backend: the ResNet50 application's
zero conv biases (outside SPEC's model and the neutral weights), the layer names the slots use,
the setup's refusal of a backend the process does not run. SPEC's counts and the equivalence
with the NumPy reference are the shared conformance suite's (shared/tests/test_conformance.py);
the layouts are checked through bench_tensorflow's tests (its Keras layers share
bench_keras_layers.weights)."""

import os

import keras
import numpy as np
import pytest
from conftest import FRAMEWORK

import bench_keras
from bench import testing
from bench_keras import cnn
from bench_shared import spec


def loaded_model(task, *overrides):
    return testing.loaded_model(FRAMEWORK, task, *overrides)


def test_keras_resnet50_keeps_its_conv_biases_apart():
    _, model, _ = loaded_model("resnet50")
    keras_count = sum(int(np.prod(v.shape)) for v in model.trainable_weights)
    assert keras_count - spec.ResNet50.param_count == 26560  # one bias per conv output channel
    assert len(model.spec_excluded) == 53  # every convolution of ResNet-50
    keys = bench_keras.tensors(model).keys()
    assert not set(model.spec_excluded) & set(keys)  # the neutral weights do not fill them
    assert sum("moving_variance" in k for k in keys) == 53
    biases = [v for v in model.weights if v.path in model.spec_excluded]
    assert biases and not any(np.any(keras.ops.convert_to_numpy(v.value)) for v in biases)


def test_cnn_slots_name_the_sequential_layers():
    _, model, params = loaded_model("cnn")
    table = cnn.slots(model)
    assert table["conv3.weight"].keys == (model.get_layer("conv3").kernel.path,)
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(model.get_layer("conv3").kernel),
        params["conv3.weight"].transpose(2, 3, 1, 0),
    )


@pytest.mark.parametrize("other", sorted(set(bench_keras.BACKENDS) - {FRAMEWORK}))
def test_setup_refuses_a_backend_this_process_does_not_run(other):
    run = testing.make_run(other)
    with pytest.raises(NotImplementedError) as error:
        bench_keras.setup(run)
    message = str(error.value)
    assert "KERAS_BACKEND=%s" % bench_keras.BACKENDS[other] in message
    assert keras.backend.backend() in message and "conf/framework/%s.yaml" % other in message


@pytest.mark.skipif(keras.backend.backend() != "jax", reason="XLA's host devices: keras_jax")
def test_host_devices_keep_xla_flags_and_refuse_another_count(monkeypatch):
    from bench_keras import backend_jax

    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_enable_fast_math=false")
    backend_jax.host_devices(2)
    assert os.environ["XLA_FLAGS"] == (
        "--xla_cpu_enable_fast_math=false --xla_force_host_platform_device_count=2"
    )
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
    with pytest.raises(ValueError, match="devices=2 needs --xla_force_host_platform_device"):
        backend_jax.host_devices(2)


@pytest.mark.skipif(
    keras.backend.backend() != "tensorflow",
    reason="only TensorFlow hands an Embedding's gradient over as one slice "
    "per occurrence (IndexedSlices)",
)
def test_the_trained_weights_check_catches_keras_own_adam(monkeypatch):
    """With Keras' own Adam (it squares an Embedding's repeated slices before summing them)
    the GRU's losses over the conformance suite's steps stay within their tolerance, but the
    trained embedding does not: the check that compares weights fails, naming it."""
    from bench.run import capabilities
    from bench_keras_layers import optimizers
    from bench_shared import conformance

    declared = dict(capabilities.declared(FRAMEWORK), name=FRAMEWORK)
    monkeypatch.setattr(
        optimizers,
        "adam",
        lambda cfg: keras.optimizers.Adam(
            cfg["lr"], beta_1=cfg["beta1"], beta_2=cfg["beta2"], epsilon=cfg["eps"]
        ),
    )
    with pytest.raises(conformance.ConformanceError, match="embedding.weight differs"):
        conformance.check_training_steps(conformance.Framework(declared), "rnn")


@pytest.mark.skipif(FRAMEWORK != "keras", reason="the tf.data input of Keras on TensorFlow")
def test_fit_and_predict_read_a_pipeline_without_autotuning():
    """Keras' own adapter for a generator autotunes its tf.data pipeline, whose teardown ended
    every one-epoch fit at 2.57 or 5.13 s (packages/keras/README.md): ours must not, and must
    still give fit every batch once, in order."""
    from bench_keras import loop

    _, model, _ = loaded_model("rnn")
    rng = np.random.RandomState(0)
    batches = [
        (
            rng.randint(0, 100, (4, spec.RNN.seq_len)).astype("int32"),
            rng.randint(0, 2, 4).astype("int64"),
        )
        for _ in range(3)
    ]
    taken = []
    data = loop.fit_input(model, batches, taken)
    assert data.options().autotune.enabled is False
    read = [(x.numpy(), y.numpy()) for x, y in data]
    assert len(taken) == 3
    for (x, y), (x0, y0) in zip(read, batches):
        np.testing.assert_array_equal(x, x0)
        np.testing.assert_array_equal(y, y0)
    inputs = loop.predict_input(model, [x for x, _ in batches])
    assert inputs.options().autotune.enabled is False
