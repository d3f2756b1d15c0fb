"""The real command line against a real Slurm (a one-host cluster of two node names, see
cluster.py) with the numpy fake framework: sweeps through Hydra's submitit launcher, runs
across nodes through submitit and srun, a time limit, submitit's warning signal before it, a
cancelled job, a reused run directory, a plain command inside an allocation of several tasks,
and the frameworks that cannot span nodes. What each test reads is what a user would: the
result files, the commands' output, and `scontrol show job` for what Slurm recorded."""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import Run

SMALL = [
    "task=densenet",
    "preset=smoke",
    "task.image_size=32",
    "task.batch_size=16",
    "preset.train_examples=512",
    "preset.test_examples=256",
    "preset.epochs=2",
]
# a run that is still training whenever a signal comes: 0.2 s per batch, a thousand epochs
ENDLESS = ["framework.options.delay_ms=200", "preset.epochs=1000"]
BENCH = [sys.executable, "-m", "bench"]


def bench(env, cwd, *args, timeout=300):
    """`python -m bench *args` here (a sweep's launching process, or a plain run)."""
    proc = subprocess.run(
        [*BENCH, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    return Run(proc, cwd)


def slurm(env, cwd, command, timeout=300):
    """A Slurm client command (srun, sbatch, salloc): (exit status, its output)."""
    proc = subprocess.run(
        command,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
    )
    return proc.returncode, proc.stdout


def read(path):
    return json.loads(Path(path).read_text())


def submitit_logs(sweep_dir):
    """Every submitit job's output (.submitit/<job>/<job>_<task>_log.out), by job folder."""
    return {p.parent.name: p.read_text() for p in sorted(sweep_dir.glob(".submitit/*/*.out"))}


def left_running(text):
    """The processes still running whose command line holds `text` (a run's directory)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            if text.encode() in cmdline:
                found.append(f"{entry}: {cmdline.decode(errors='replace')}")
    return found


def wait_for(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {what} after {timeout} s")
        time.sleep(0.5)


def test_a_submitit_sweep_is_an_array_job_a_failed_run_fails_its_job_and_resumes(
    slurm_cluster, slurm_env, tmp_path
):
    args = [
        "-m",
        "hydra/launcher=submitit_slurm",
        "framework=fake",
        "task=cnn",
        "preset=smoke",
        "framework.options.fault=none,crash",
        "sweep=array",
        "hydra.launcher.timeout_min=10",
        "+hydra.launcher.additional_parameters.exclusive=true",
    ]
    run = bench(slurm_env, tmp_path, *args)
    assert run.returncode == 1, run.output  # the sweep holds a failed run
    sweep_dir = tmp_path / "results" / "sweeps" / "array"
    assert (sweep_dir / "summary.md").is_file(), run.output
    results = {
        read(p)["config"]["framework"]["options"]["fault"]: read(p)
        for p in sweep_dir.glob("*/result.json")
    }
    assert results["none"]["status"] == "ok" and results["crash"]["status"] == "failed"
    logs = submitit_logs(sweep_dir)
    assert len(logs) == 2 and all(re.fullmatch(r"\d+_[01]", job) for job in logs), logs
    states = {}
    for job, log in logs.items():  # each array element's run, and what Slurm recorded
        fault = "crash" if "fake crash requested" in log else "none"
        states[fault] = slurm_cluster.wait_ended(job, 60)
    # a run that failed fails its job; exclusive=true reached Slurm
    assert states["none"]["JobState"] == "COMPLETED", states["none"]
    assert states["crash"]["JobState"] == "FAILED", states["crash"]
    assert all(s["OverSubscribe"] == "NO" for s in states.values()), states

    again = bench(slurm_env, tmp_path, *args)
    assert again.returncode == 1, again.output
    new = {job: log for job, log in submitit_logs(sweep_dir).items() if job not in logs}
    said = "".join(new.values())
    assert len(new) == 2 and "skipped, already ok" in said, said
    assert "retrying: the stored result" in said and "is failed" in said, said


def test_a_run_across_two_nodes_through_submitit_and_through_srun(
    slurm_cluster, slurm_env, tmp_path
):
    run = bench(
        slurm_env,
        tmp_path,
        "-m",
        "hydra/launcher=submitit_slurm",
        "framework=fake",
        "devices=2",
        *SMALL,
        "hydra.launcher.nodes=2",
        "sweep=nodes",
    )
    assert run.returncode == 0, run.output
    (job_dir,) = [p.parent for p in (tmp_path / "results/sweeps/nodes").glob("*/result.json")]
    first, second = read(job_dir / "result.json"), read(job_dir / "result.node1.json")
    assert first["status"] == "ok" and second["status"] == "ok", (first, second)
    assert [r["rank"] for r in first["ranks"]] == [0] and first["node"]["nodes"] == 2
    assert [r["rank"] for r in second["ranks"]] == [1] and second["node"]["node"] == 1
    assert first["node"]["master_addr"] == "node1"  # the step's first node

    run_dir = tmp_path / "srun"
    code, output = slurm(
        slurm_env,
        tmp_path,
        [
            "srun",
            "-N2",
            "--ntasks-per-node=1",
            *BENCH,
            "framework=fake",
            "devices=4",
            *SMALL,
            f"hydra.run.dir={run_dir}",
        ],
    )
    assert code == 0, output
    first, second = read(run_dir / "result.json"), read(run_dir / "result.node1.json")
    assert first["status"] == "ok" and first["distributed"]["world_size"] == 4, output
    assert [r["rank"] for r in first["ranks"]] == [0, 1]
    assert [r["rank"] for r in second["ranks"]] == [2, 3]


def test_time_limits_slurm_s_sigterm_and_submitit_s_warning_record_an_interrupted_run(
    slurm_cluster, slurm_env, tmp_path
):
    """At the time limit Slurm sends SIGTERM (twice, ~10 ms apart) to every process of the
    step; submitit asks Slurm for SIGUSR2 signal_delay_s before it. Both end the run as
    interrupted, its workers killed and its result written; the warned job ends itself (FAILED,
    not TIMEOUT) and the sweep's launching process goes on to its summary."""
    run_dir = tmp_path / "limit"
    with open(tmp_path / "limit.out", "w") as out:
        limited = subprocess.Popen(
            [
                "srun",
                "-N2",
                "--ntasks-per-node=1",
                "--time=1",
                *BENCH,
                "framework=fake",
                "devices=2",
                *SMALL,
                *ENDLESS,
                f"hydra.run.dir={run_dir}",
            ],
            cwd=tmp_path,
            env=slurm_env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        # the warning comes when at most signal_delay_s of the two minutes is left (Slurm
        # looks every 30 s): 75 to 105 s after the start, with the worker running however
        # slowly a busy machine starts it
        warned = bench(
            slurm_env,
            tmp_path,
            "-m",
            "hydra/launcher=submitit_slurm",
            "framework=fake",
            "task=cnn",
            "preset=smoke",
            *ENDLESS,
            "sweep=warned",
            "hydra.launcher.timeout_min=2",
            "hydra.launcher.signal_delay_s=45",
            timeout=300,
        )
        limited.wait(timeout=240)
    finally:
        limited.kill()
    assert warned.returncode == 1, warned.output
    sweep_dir = tmp_path / "results/sweeps/warned"
    assert (sweep_dir / "summary.md").is_file(), warned.output
    (result,) = [read(p) for p in sweep_dir.glob("*/result.json")]
    assert result["status"] == "interrupted" and result["interrupted"] == "time limit"
    assert result["error"].startswith("interrupted (time limit); the worker"), result["error"]
    (job,) = submitit_logs(sweep_dir)
    assert slurm_cluster.wait_ended(job, 60)["JobState"] == "FAILED"

    output = (tmp_path / "limit.out").read_text()
    assert "DUE TO TIME LIMIT" in output and "Traceback" not in output, output
    for name in ("result.json", "result.node1.json"):
        node = read(run_dir / name)
        assert node["status"] == "interrupted" and node["interrupted"] == "SIGTERM", node
        assert node["ranks"] and "before the worker ran" not in node["error"], node["error"]
    assert not left_running(str(run_dir)) and not left_running(str(sweep_dir))


def test_a_cancelled_job_records_an_interrupted_run_on_every_node(
    slurm_cluster, slurm_env, tmp_path
):
    sweep_dir = tmp_path / "results/sweeps/cancelled"
    with open(tmp_path / "launcher.out", "w") as out:
        launcher = subprocess.Popen(
            [
                *BENCH,
                "-m",
                "hydra/launcher=submitit_slurm",
                "framework=fake",
                "devices=2",
                *SMALL,
                *ENDLESS,
                "hydra.launcher.nodes=2",
                "sweep=cancelled",
            ],
            cwd=tmp_path,
            env=slurm_env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        # both nodes training: each task's progress (its stderr) has an epoch's line
        wait_for(
            lambda: (
                len(
                    [
                        p
                        for p in sweep_dir.glob(".submitit/*/*_log.err")
                        if "train epoch 1/" in p.read_text()
                    ]
                )
                == 2
            ),
            120,
            "training on both nodes",
        )
        (job,) = submitit_logs(sweep_dir)
        subprocess.run(["scancel", job], env=slurm_env, check=True)
        launcher.wait(timeout=120)  # not waiting forever for a result
    finally:
        launcher.kill()
    output = (tmp_path / "launcher.out").read_text()
    assert launcher.returncode == 1 and "1 interrupted" in output, output
    (job_dir,) = [p.parent for p in sweep_dir.glob("*/result.json")]
    for name in ("result.json", "result.node1.json"):
        node = read(job_dir / name)
        assert node["status"] == "interrupted" and node["interrupted"] == "SIGTERM", node
        assert node["error"].startswith("interrupted (SIGTERM); the workers"), node["error"]
    assert slurm_cluster.wait_ended(job, 60)["JobState"] == "CANCELLED"
    assert not left_running(str(sweep_dir))


def snapshot(run_dir):
    """Every file of a run directory but Hydra's own record (.hydra/, which Hydra writes
    before the orchestrator starts): its bytes and modification time."""
    return {
        p.relative_to(run_dir): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in run_dir.rglob("*")
        if p.is_file() and ".hydra" not in p.parts
    }


def test_a_reused_run_directory_is_refused_by_every_task_and_left_as_it_was(
    slurm_cluster, slurm_env, tmp_path
):
    run_dir = tmp_path / "run"
    srun = [
        "srun",
        "-N2",
        "--ntasks-per-node=1",
        *BENCH,
        "framework=fake",
        "devices=2",
        *SMALL,
        "preset.timeout_s=600",
    ]
    code, output = slurm(slurm_env, tmp_path, [*srun, f"hydra.run.dir={run_dir}"])
    assert code == 0 and (run_dir / "result.node1.json").is_file(), output
    before = snapshot(run_dir)
    # refused at once by both tasks, well before preset.timeout_s
    code, output = slurm(slurm_env, tmp_path, [*srun, f"hydra.run.dir={run_dir}"], timeout=120)
    assert code != 0 and output.count("already holds another run") == 2, output
    assert "task 0: Exited with exit code 1" in output and "task 1: Exited" in output, output
    assert snapshot(run_dir) == before
    # without hydra.run.dir every task would make a directory of its own
    code, output = slurm(slurm_env, tmp_path, srun, timeout=120)
    assert code != 0 and output.count("give hydra.run.dir=") == 2, output


@pytest.mark.parametrize("allocate", ["sbatch", "salloc"])
def test_a_plain_command_in_an_allocation_of_two_tasks_runs_all_its_ranks(
    slurm_cluster, slurm_env, tmp_path, allocate
):
    """A batch script or an salloc shell has SLURM_NTASKS=2 but is one process, not two
    tasks of an srun step: the run starts both ranks itself."""
    run_dir = tmp_path / "run"
    command = " ".join([*BENCH, "framework=fake", "devices=2", *SMALL, f"hydra.run.dir={run_dir}"])
    if allocate == "sbatch":
        code, output = slurm(
            slurm_env,
            tmp_path,
            ["sbatch", "--wait", "-n2", "-o", "batch.out", "--wrap", command],
            timeout=120,
        )
        output += (tmp_path / "batch.out").read_text()
    else:
        code, output = slurm(
            slurm_env, tmp_path, ["salloc", "-n2", "sh", "-c", command], timeout=120
        )
    assert code == 0, output
    result = read(run_dir / "result.json")
    assert result["status"] == "ok" and "node" not in result, output
    assert [r["rank"] for r in result["ranks"]] == [0, 1]
    assert not (run_dir / "result.node1.json").exists()


@pytest.mark.parametrize(
    "framework,why", [("tensorflow", "TF_CONFIG"), ("paddle", "PADDLE_TRAINER_ENDPOINTS")]
)
def test_frameworks_whose_ranks_share_one_address_refuse_to_span_nodes(
    slurm_cluster, slurm_env, tmp_path, framework, why
):
    """Refused before anything is prepared or looked for (their environments need not be
    built here), with the reason, by every task."""
    run_dir = tmp_path / "run"
    code, output = slurm(
        slurm_env,
        tmp_path,
        [
            "srun",
            "-N2",
            "--ntasks-per-node=1",
            *BENCH,
            f"framework={framework}",
            "devices=2",
            *SMALL,
            f"hydra.run.dir={run_dir}",
        ],
        timeout=120,
    )
    assert code == 2, output
    for name in ("result.json", "result.node1.json"):
        result = read(run_dir / name)
        assert result["status"] == "unsupported", result.get("error")
        assert f"framework={framework} runs its ranks on one node only" in result["error"]
        assert why in result["error"] and "srun -n1" in result["error"], result["error"]
