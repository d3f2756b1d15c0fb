"""`python -m bench framework=tensorflow ...` end to end, what is TensorFlow's own: the tf.data
pipeline switch and the bf16 policy. Learning, ResNet-50 and the switches each task's config
asks for (XLA for the GRU) are checked by the shared end-to-end suite."""


def test_native_pipeline(run_bench):
    code, output, result = run_bench(
        "framework=tensorflow",
        "task=cnn",
        "preset=smoke",
        "preset.epochs=1",
        "preset.train_examples=512",
        "framework.options.native_pipeline=true",
    )
    assert code == 0, output
    assert result["framework"]["settings"]["native_pipeline"] is True


def test_bf16_policy(run_bench):
    # a CPU without AVX-512 emulates bf16, many times slower: a few steps only
    code, output, result = run_bench(
        "framework=tensorflow",
        "task=rnn",
        "preset=smoke",
        "precision=bf16",
        "preset.epochs=1",
        "preset.train_examples=256",
        "preset.test_examples=128",
    )
    assert code == 0, output
    assert result["framework"]["settings"]["policy"] == "mixed_bfloat16"
    assert result["framework"]["settings"]["xla"] is True  # conf/task_framework/rnn_tensorflow.yaml
