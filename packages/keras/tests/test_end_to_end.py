"""`python -m bench framework=keras* ...` end to end, what is Keras' own: its workers run on the
backend their YAML's `env` names (KERAS_BACKEND) and record that backend's library and the
jit_compile that the config asked for. Learning, ResNet-50 and the per-task switches are
checked by the shared end-to-end suite."""

from conftest import FRAMEWORK

import bench_keras


def test_workers_run_keras_on_their_backend(run_bench):
    backend = bench_keras.BACKENDS[FRAMEWORK]
    # the GRU where it is cheap
    task = "cnn" if FRAMEWORK == "keras_torch" else "rnn"
    code, output, result = run_bench(
        f"framework={FRAMEWORK}",
        f"task={task}",
        "preset=smoke",
        "preset.epochs=1",
        "preset.train_examples=128",
        "preset.test_examples=64",
    )
    assert code == 0, output
    settings = result["framework"]["settings"]
    assert settings["backend"] == backend
    assert result["host"]["environment_variables"]["KERAS_BACKEND"] == backend
    assert result["framework"]["versions"][backend]  # its version: tensorflow, jax, torch
    assert (
        settings["jit_compile"]
        is {"keras": False, "keras_jax": True, "keras_torch": False}[FRAMEWORK]
    )
