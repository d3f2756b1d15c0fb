"""`python -m bench framework=torch ...` end to end, what is PyTorch's own: bf16 autocast on a
CPU and the switches it records. Learning the synthetic data, ResNet-50 inference and SPEC's
counts are the shared end-to-end suite's (packages/bench/tests_frameworks)."""


def test_bf16_runs_on_cpu_and_records_the_switches(run_bench):
    # a CPU without AVX-512 emulates bf16, thousands of times slower: a few steps only
    code, output, result = run_bench(
        "framework=torch",
        "task=rnn",
        "preset=smoke",
        "precision=bf16",
        "preset.epochs=1",
        "preset.train_examples=256",
        "preset.test_examples=128",
    )
    assert code == 0, output
    assert result["config"]["precision"]["name"] == "bf16"
    settings = result["framework"]["settings"]
    assert settings["threads"] >= 1 and settings["device"] == "cpu"
    assert {"channels_last", "compile", "cudnn_benchmark", "tf32"} <= set(settings)
    assert settings["flush_denormal"] in (True, False)


def test_frozen_model_stays_at_chance(run_bench):
    """lr 0: accuracy is measured on the test data, not remembered from training."""
    code, output, result = run_bench(
        "framework=torch", "task=rnn", "preset=smoke", "task.optimizer.lr=0.0", "preset.epochs=1"
    )
    assert code == 0, output
    assert 0.4 < result["accuracy"] < 0.6


def test_two_slurm_nodes_train_one_ddp_run(tmp_path, tmp_path_factory):
    """The multi-node path (bench.run.slurm), as 2 "nodes" (Slurm tasks on localhost) x 1
    process: each orchestrator starts its rank, the two meet in one gloo process group at the
    address and port derived from the Slurm job, and rank 0's node reports one run that
    learns."""
    import json

    from bench import testing

    run_dir = tmp_path / "run"
    outputs = testing.run_cli_as_slurm_tasks(
        [
            "framework=torch",
            "task=densenet",
            "devices=2",
            "preset=smoke",
            "task.image_size=32",
            "task.batch_size=16",
            "preset.train_examples=512",
            "preset.test_examples=256",
            "preset.epochs=2",
            f"hydra.run.dir={run_dir}",
            # both "nodes" share this machine's cores: one thread each (two OpenMP teams
            # spinning on the same cores run 10x slower)
            "framework.options.threads=1",
        ],
        tmp_path,
        tmp_path_factory.getbasetemp() / "cache",
    )
    for code, output in outputs:
        assert code == 0, output
    result = json.loads((run_dir / "result.json").read_text())
    assert result["status"] == "ok" and result["accuracy"] > 0.55
    assert result["framework"]["settings"]["process_group"] == {
        "backend": "gloo",
        "rank": 0,
        "world_size": 2,
    }
    node1 = json.loads((run_dir / "result.node1.json").read_text())
    assert node1["status"] == "ok" and node1["ranks"][0]["rank"] == 1
