"""`python -m bench framework=keras ...` end to end, what is Keras' own: its workers run on the
TensorFlow backend, set through the environment (conf/framework/keras.yaml's `env`). Learning,
ResNet-50 and the per-task switches are checked by the shared end-to-end suite."""


def test_workers_run_keras_on_tensorflow(run_bench):
    code, output, result = run_bench("framework=keras", "task=rnn", "preset=smoke",
                                     "preset.epochs=1", "preset.train_examples=256",
                                     "preset.test_examples=128")
    assert code == 0, output
    assert result["framework"]["settings"]["backend"] == "tensorflow"
    assert result["host"]["environment_variables"]["KERAS_BACKEND"] == "tensorflow"
    assert result["framework"]["settings"]["jit_compile"] is True  # conf/task_framework/rnn_keras
