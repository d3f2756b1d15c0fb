"""What is Keras 2's own, on this session's backend: the ResNet50 application's zero conv
biases (outside SPEC's model and the neutral weights), the set-up (channels_first, KERAS_HOME
inside the environment), the refusal of a backend the process does not run, and the import's
error without KERAS_BACKEND. SPEC's counts, the layouts and the equivalence with the NumPy
reference are the shared conformance suite's (shared/tests/test_conformance.py)."""

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import FRAMEWORK, make_run
from keras import backend as K

import bench_keras2
from bench_keras2 import resnet50
from bench_shared import spec


def test_setup_runs_channels_first_with_keras_home_in_the_environment():
    settings = bench_keras2.setup(make_run("cnn"))
    assert settings["backend"] == bench_keras2.BACKENDS[FRAMEWORK]
    assert settings["image_data_format"] == K.image_data_format() == "channels_first"
    home = settings["keras_home"]
    assert home.startswith(sys.prefix) and os.path.isfile(os.path.join(home, "keras.json"))


def test_keras_resnet50_keeps_its_conv_biases_apart():
    run = make_run("resnet50")
    bench_keras2.setup(run)
    model = resnet50.build_model(run)
    keras_count = sum(int(np.prod(K.int_shape(v))) for v in model.trainable_weights)
    assert keras_count - spec.ResNet50.param_count == 26560  # one bias per conv output channel
    assert bench_keras2.count_parameters(model) == spec.ResNet50.param_count
    assert len(model.spec_excluded) == 53  # every convolution of ResNet-50
    keys = bench_keras2.tensors(model).keys()
    assert not set(model.spec_excluded) & set(keys)  # the neutral weights do not fill them
    assert sum("moving_variance" in k for k in keys) == 53
    biases = [v for v in model.weights if v.name in model.spec_excluded]
    assert biases and not any(np.any(K.get_value(v)) for v in biases)
    assert {layer.epsilon for layer in model.layers if hasattr(layer, "moving_mean")} == {
        1.001e-5
    }  # keras.applications.resnet's, not the older ResNet50's 1e-3
    # its predict function built (Theano: compiled) at build time, its seconds recorded apart
    assert list(bench_keras2.compile_seconds) == [model.name + ".predict"]


@pytest.mark.parametrize("other", sorted(set(bench_keras2.BACKENDS) - {FRAMEWORK}))
def test_setup_refuses_a_backend_this_process_does_not_run(other):
    with pytest.raises(NotImplementedError) as error:
        bench_keras2.setup(make_run("cnn", other))
    message = str(error.value)
    assert "KERAS_BACKEND=%s" % bench_keras2.BACKENDS[other] in message
    assert K.backend() in message and "conf/framework/%s.yaml" % other in message


def test_import_without_keras_backend_names_the_fix(tmp_path):
    env = dict(os.environ)
    env.pop("KERAS_BACKEND")
    out = subprocess.run(
        [sys.executable, "-c", "import bench_keras2"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=True,
        cwd=str(tmp_path),
    )
    assert out.returncode == 1
    assert "KERAS_BACKEND=cntk" in out.stderr and "KERAS_BACKEND=theano" in out.stderr
    assert "backend" not in out.stderr.split("ImportError")[0]  # keras printed no "Using ..."
