"""Helpers for the framework packages' tests: the run dict a worker would get, and the real
CLI in a subprocess. Importing this module imports no framework."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from .run import benchmark, config, record


def make_run(framework, *overrides):
    """The run dict the orchestrator would hand a worker, composed from the real configs."""
    cfg = config.compose([f"framework={framework}", *overrides])
    return benchmark.worker_run(cfg, {"arrays": {}, "limits": {}})


def run_cli(args, cwd, cache_dir, timeout=900):
    """`python -m bench *args` in a subprocess: (exit status, output, last result or None)."""
    env = dict(os.environ, BENCH_CACHE_DIR=str(cache_dir))
    proc = subprocess.run(
        [sys.executable, "-m", "bench", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    paths = re.findall(r"^result: (.+)$", proc.stdout, re.M)
    result = json.loads(Path(paths[-1]).read_text()) if paths else None
    problem = record.problem(result) if result is not None else None
    if problem:  # every result written follows result.schema.json
        raise AssertionError(f"{paths[-1]} does not follow the result schema: {problem}")
    return proc.returncode, proc.stdout + proc.stderr, result


def free_slurm_job_id():
    """A job ID whose rendezvous port (bench.run.slurm) nobody listens on now."""
    import random
    import socket

    from .run.slurm import PORT_BASE, PORT_SPAN

    for _ in range(100):
        job_id = random.randrange(PORT_SPAN)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", PORT_BASE + job_id))
            except OSError:
                continue
        return job_id
    raise RuntimeError("no free rendezvous port found")


def run_cli_as_slurm_tasks(args, cwd, cache_dir, tasks=2, timeout=900, env=None):
    """`python -m bench *args` as the `tasks` tasks of one Slurm job step on this machine (one
    "node" each, all named localhost), run at once: [(exit status, output)] per task. `env`:
    the environment to start from (this process's by default)."""
    job_id = free_slurm_job_id()
    procs, logs = [], [Path(cwd) / f"slurm-task{task}.out" for task in range(tasks)]
    for task, log in enumerate(logs):
        task_env = dict(
            env or os.environ,
            BENCH_CACHE_DIR=str(cache_dir),
            SLURM_JOB_ID=str(job_id),
            SLURM_NTASKS=str(tasks),
            SLURM_PROCID=str(task),
            SLURM_LOCALID="0",
            SLURM_NODEID=str(task),
            SLURM_JOB_NODELIST="localhost",
            # what srun sets in a step's tasks (a batch script has none of these)
            SLURM_STEP_ID="0",
            SLURM_STEP_NUM_TASKS=str(tasks),
            SLURM_STEP_NODELIST="localhost",
        )
        with open(log, "w") as out:  # a file, not a pipe: no task blocks on a full one
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "bench", *args],
                    cwd=cwd,
                    env=task_env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            )
    try:
        codes = [proc.wait(timeout=timeout) for proc in procs]
    finally:
        for proc in procs:
            proc.kill()
    return [(code, log.read_text()) for code, log in zip(codes, logs)]


def loaded_model(framework, task, *overrides):
    """(run, model, neutral params): the framework's task model, dropout off, holding the
    deterministic random neutral weights of the equivalence check. Imports the framework:
    for the framework packages' own tests only."""
    import importlib

    from bench_shared import contract, slots, weights

    run = make_run(framework, f"task={task}", *overrides)
    if task == "cnn":
        run["task"]["dropout"] = False
    contract.check_run(run)
    package = importlib.import_module(run["framework"]["package"])
    package.setup(run)
    module = importlib.import_module(f"{package.__name__}.{task}")
    model = module.build_model(run)
    params = weights.random_weights(task, seed=0)
    slots.load_into(package, module, task, model, params)
    return run, model, params
