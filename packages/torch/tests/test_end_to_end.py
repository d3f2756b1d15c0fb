"""`python -m bench framework=torch ...` end to end, what is PyTorch's own: bf16 autocast on a
CPU and the switches it records. Learning the synthetic data, ResNet-50 inference and SPEC's
counts are the shared end-to-end suite's (packages/bench/tests_frameworks)."""


def test_bf16_runs_on_cpu_and_records_the_switches(run_bench):
    code, output, result = run_bench("framework=torch", "task=rnn", "preset=smoke",
                                     "precision=bf16", "preset.epochs=1")
    assert code == 0, output
    assert result["config"]["precision"]["name"] == "bf16"
    settings = result["framework"]["settings"]
    assert settings["threads"] >= 1 and settings["device"] == "cpu"
    assert {"channels_last", "compile", "cudnn_benchmark", "tf32"} <= set(settings)
    assert settings["flush_denormal"] in (True, False)


def test_frozen_model_stays_at_chance(run_bench):
    """lr 0: accuracy is measured on the test data, not remembered from training."""
    code, output, result = run_bench("framework=torch", "task=rnn", "preset=smoke",
                                     "task.optimizer.lr=0.0", "preset.epochs=1")
    assert code == 0, output
    assert 0.4 < result["accuracy"] < 0.6
