"""What is Keras' own in its models: the ResNet50 application's zero conv biases (outside SPEC's
model and the neutral weights), the layer names the slots use. SPEC's counts and
the equivalence with the NumPy reference are the shared conformance suite's
(shared/tests/test_conformance.py); the layout conversions are bench_tensorflow's."""
import numpy as np

import bench_keras
from bench import testing
from bench_keras import cnn
from bench_shared import spec


def loaded_model(task, *overrides):
    return testing.loaded_model("keras", task, *overrides)


def test_keras_resnet50_keeps_its_conv_biases_apart():
    _, model, _ = loaded_model("resnet50")
    keras_count = sum(int(np.prod(v.shape)) for v in model.trainable_weights)
    assert keras_count - spec.ResNet50.param_count == 26560  # one bias per conv output channel
    assert len(model.spec_excluded) == 53  # every convolution of ResNet-50
    keys = bench_keras.tensors(model).keys()
    assert not set(model.spec_excluded) & set(keys)  # the neutral weights do not fill them
    assert sum("moving_variance" in k for k in keys) == 53
    biases = [v for v in model.weights if v.path in model.spec_excluded]
    assert biases and not any(np.any(v.numpy()) for v in biases)  # zero, after loading too


def test_cnn_slots_name_the_sequential_layers():
    _, model, params = loaded_model("cnn")
    table = cnn.slots(model)
    assert table["conv3.weight"].keys == (model.get_layer("conv3").kernel.path,)
    np.testing.assert_array_equal(model.get_layer("conv3").kernel.numpy(),
                                  params["conv3.weight"].transpose(2, 3, 1, 0))

