"""The device-count axis (task densenet, `devices=N`) through the CLI: N real worker processes
started as torchrun starts them, supervised as one run, one result. The fake framework's
ranks train independent replicas: what is tested here is the orchestrator's side."""

import json
import re

import pytest

SMALL = [
    "task=densenet",
    "preset=smoke",
    "task.image_size=32",
    "task.batch_size=16",
    "preset.train_examples=512",
    "preset.test_examples=256",
    "preset.epochs=2",
]


def test_two_processes_share_the_cores_and_report_one_learning_run(run_bench):
    run = run_bench("framework=fake", "devices=2", *SMALL)
    assert run.returncode == 0, run.output
    r = run.result
    assert r["status"] == "ok" and r["config"]["devices"] == 2
    ranks = r["ranks"]
    assert [x["rank"] for x in ranks] == [0, 1] and all(x["exit_code"] == 0 for x in ranks)
    assert all(x["status"] == "ok" for x in ranks)
    cpus = [set(x["cpus"]) for x in ranks]  # each its own share of the cores
    assert all(cpus) and not cpus[0] & cpus[1]
    assert r["distributed"]["world_size"] == 2 and r["distributed"]["rank"] == 0
    # a global batch is both ranks' batches: 512 examples / (2 x 16) = 16 steps per epoch
    assert r["batches_per_epoch"] == 16 and r["train_examples"] == 512
    assert r["accuracy_metric"] == "mean_roc_auc" and r["accuracy"] > 0.6, r["accuracy"]
    assert len(r["label_auc"]) == 14
    assert re.search(r"test mean ROC-AUC 0\.\d+ on 256", run.output), run.output
    run_dir = run.result_paths[0].parent
    assert (run_dir / "worker.log").is_file() and (run_dir / "worker.rank1.log").is_file()
    ports = r["distributed"]["worker_ports"]  # one per rank, none the rendezvous port
    assert len(set(ports)) == 2 and r["distributed"]["master_port"] not in ports
    assert r["distributed"]["launch"] == "processes" and r["distributed"]["processes"] == 2
    rank1 = json.loads((run_dir / "run.rank1.json").read_text())
    assert rank1["devices"] == 2 and rank1["output"].endswith("worker_result.rank1.json")
    # rank 1 trained on the other half of each global batch and did not evaluate
    other = json.loads((run_dir / "worker_result.rank1.json").read_text())
    assert other["distributed"]["rank"] == 1 and "accuracy" not in other


def test_one_process_drives_every_device_on_global_batches(run_bench):
    """data_parallel_launch one_process (Gluon's contexts, MirroredStrategy): one worker, the
    global batch of both devices per step, no ranks to supervise."""
    run = run_bench(
        "framework=fake",
        "devices=2",
        *SMALL,
        "+framework.capabilities.data_parallel_launch.cpu=one_process",
    )
    assert run.returncode == 0, run.output
    r = run.result
    assert r["status"] == "ok" and "ranks" not in r
    assert r["distributed"] == dict(
        r["distributed"], world_size=2, processes=1, rank=0, launch="one_process"
    )
    assert r["batches_per_epoch"] == 16 and r["accuracy"] > 0.6  # 512 / (2 x 16)
    assert not (run.result_paths[0].parent / "worker.rank1.log").exists()


def test_one_device_is_the_plain_run(run_bench):
    run = run_bench("framework=fake", *SMALL)
    assert run.returncode == 0, run.output
    r = run.result
    assert "ranks" not in r and r["distributed"]["world_size"] == 1
    assert r["batches_per_epoch"] == 32 and r["accuracy"] > 0.6


@pytest.mark.parametrize(
    "fault,what",
    [
        ("crash", "RuntimeError: fake crash requested"),
        ("exit", "exited with status 7"),
        ("kill", "died with signal 9"),
    ],
)
def test_a_failing_rank_takes_the_run_down_and_says_which(run_bench, fault, what):
    run = run_bench(
        "framework=fake",
        "devices=2",
        *SMALL,
        f"framework.options.fault={fault}",
        "framework.options.fault_rank=1",
    )
    assert run.returncode != 0
    r = run.result
    assert r["status"] == "failed" and "rank 1" in r["error"] and what in r["error"], r["error"]
    assert r["ranks"][1]["exit_code"] != 0


def test_a_hanging_rank_is_killed_with_the_others_at_the_timeout(run_bench):
    run = run_bench(
        "framework=fake",
        "devices=2",
        *SMALL,
        "framework.options.fault=hang",
        "framework.options.fault_rank=1",
        "preset.timeout_s=20",
    )
    r = run.result
    assert r["status"] == "failed" and "timed out after 20 s" in r["error"], r["error"]
    assert all(x["exit_code"] is not None for x in r["ranks"])  # none left running


def test_the_axis_is_densenet_s_and_needs_a_declared_idiom(run_bench):
    # refused like every other combination that cannot run: unsupported, exit status 2
    other_task = run_bench("framework=fake", "task=cnn", "devices=2", "preset=smoke")
    assert other_task.returncode == 2 and other_task.result["status"] == "unsupported"
    assert "task=cnn runs on one device" in other_task.result["error"], other_task.output
    undeclared = run_bench(
        "framework=fake",
        "devices=2",
        *SMALL,
        "~framework.capabilities.data_parallel.cpu",
        "framework.capabilities.data_parallel_reason='a known bug'",
    )
    assert undeclared.result["status"] == "unsupported"
    assert "declares no data-parallel training there (a known bug)" in undeclared.result["error"]
    unknown_launch = run_bench(
        "framework=fake",
        "devices=2",
        *SMALL,
        "+framework.capabilities.data_parallel_launch.cpu=carrier_pigeon",
    )
    assert unknown_launch.returncode == 1
    assert "choose one of processes, one_process, mpiexec" in unknown_launch.result["error"]
    too_many = run_bench("framework=fake", "devices=64", *SMALL)
    assert too_many.result["status"] == "unsupported"
    assert "devices=64 on device=cpu" in too_many.result["error"]
    zero = run_bench("framework=fake", "devices=0", *SMALL)
    assert zero.returncode == 1 and "devices=0" in zero.result["error"]


def test_two_slurm_tasks_run_one_job_each_starting_its_node_s_rank(bench_env, tmp_path):
    """Two "nodes" (Slurm tasks on localhost) x 1 rank: each orchestrator starts its own
    rank of the same run in the shared run directory; rank 0's node writes result.json, node
    1 result.node1.json; both ranks meet at the address and port derived from the job."""
    from bench import testing

    run_dir = tmp_path / "run"
    outputs = testing.run_cli_as_slurm_tasks(
        ["framework=fake", "devices=2", *SMALL, f"hydra.run.dir={run_dir}"],
        tmp_path,
        bench_env["BENCH_CACHE_DIR"],
        env=bench_env,
    )
    for code, output in outputs:
        assert code == 0, output
    first = json.loads((run_dir / "result.json").read_text())
    second = json.loads((run_dir / "result.node1.json").read_text())
    assert first["status"] == "ok" and first["accuracy"] > 0.6
    assert [r["rank"] for r in first["ranks"]] == [0] and [r["rank"] for r in second["ranks"]] == [
        1
    ]
    assert first["node"]["nodes"] == 2 and second["node"]["node"] == 1
    assert first["node"]["master_port"] == second["node"]["master_port"]
    assert first["distributed"]["master_addr"] == "localhost"
    assert (run_dir / "worker.log").is_file() and (run_dir / "worker.rank1.log").is_file()
    assert "node 1 of 2: ranks 1..1 ok" in outputs[1][1]


def test_slurm_devices_must_split_evenly_over_the_tasks(bench_env, tmp_path):
    from bench import testing

    outputs = testing.run_cli_as_slurm_tasks(
        ["framework=fake", "devices=3", *SMALL, f"hydra.run.dir={tmp_path / 'run'}"],
        tmp_path,
        bench_env["BENCH_CACHE_DIR"],
        env=bench_env,
    )
    for code, output in outputs:
        assert code == 1 and "devices must be a multiple of 2" in output, output


def test_slurm_node_lists_expand_in_order_and_the_layout_follows_the_task():
    from bench.run import slurm

    assert slurm.hostnames("gpu[01-03,07],login1") == ["gpu01", "gpu02", "gpu03", "gpu07", "login1"]
    env = {
        "SLURM_NTASKS": "2",
        "SLURM_PROCID": "1",
        "SLURM_JOB_ID": "123",
        "SLURM_JOB_NODELIST": "n[7-9]",
        "SLURM_STEP_ID": "0",
        "SLURM_STEP_NUM_TASKS": "2",
        "SLURM_STEP_NODELIST": "n[8-9]",
    }
    layout = slurm.node_layout(4, env)
    assert layout == {
        "node": 1,
        "nodes": 2,
        "local_devices": 2,
        "rank_offset": 2,
        "local_rank_offset": 0,
        "master_addr": "n8",
        "master_port": slurm.PORT_BASE + 123,
        "worker_ports": [slurm.PORT_BASE + 124 + r for r in range(4)],
    }
    assert slurm.place(4, env).result_name == "result.node1.json"
    assert slurm.node_layout(1, env) is None and slurm.place(1, env).result_name == "result.json"
    assert slurm.node_layout(4, {"SLURM_NTASKS": "1"}) is None
    # a batch script or an salloc shell of 2 tasks is one process: no step, no layout
    batch = {k: v for k, v in env.items() if not k.startswith("SLURM_STEP")}
    assert slurm.node_layout(4, batch) is None
    assert slurm.place(4, batch).result_name == "result.json"
