"""Where runs write, through `python -m bench` in subprocesses: relative directories are the
command's, no two runs share a directory, a sweep's directory is locked and its job
directories stay inside it."""

import json
import re
import signal
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from cli_process import FAST, read_until, start, strict_json


@pytest.mark.parametrize("how", ["BENCH_CACHE_DIR", "data.cache_dir"])
def test_a_relative_cache_directory_is_the_one_the_command_started_in(run_bench, bench_env, how):
    if how == "BENCH_CACHE_DIR":
        run = run_bench(*FAST, "task=cnn", env=dict(bench_env, BENCH_CACHE_DIR="relcache"))
    else:
        run = run_bench(*FAST, "task=cnn", "data.cache_dir=relcache")
    assert run.returncode == 0, run.output  # the worker, in its run directory, found the arrays
    entry = Path(run.result["data"]["cache_entry"])
    assert entry.is_absolute() and entry.parent == run.cwd / "relcache" / "synthetic"
    assert all(Path(path).is_file() for path in run.result["data"]["arrays"].values())


# no two runs share a directory
def test_runs_started_in_the_same_second_get_their_own_directories(bench_env, tmp_path):
    runs = tmp_path / "results" / "runs"
    runs.mkdir(parents=True)
    now = datetime.now()
    for second in range(90):  # another run in every second of the next minute and a half
        stamp = (now + timedelta(seconds=second)).strftime("%Y-%m-%d_%H-%M-%S")
        taken = runs / f"{stamp}_cnn_fake_cpu_fp32_smoke"
        taken.mkdir()
        (taken / "run.json").write_text("{}")
    procs = [start([*FAST, "task=cnn", f"seed={seed}"], bench_env, tmp_path) for seed in (1, 2)]
    outputs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    paths = [Path(re.search(r"^result: (.+)$", out, re.M).group(1)) for out in outputs]
    assert paths[0].parent != paths[1].parent
    for seed, path in zip((1, 2), paths):
        assert re.search(r"_smoke-[23]$", path.parent.name), path  # next to a taken name
        assert strict_json(path)["config"]["seed"] == seed
        assert json.loads((path.parent / "run.json").read_text())["seed"] == seed


def test_an_explicit_run_directory_is_not_reused(run_bench, tmp_path):
    first = run_bench(*FAST, "task=cnn", "hydra.run.dir=mine")
    assert first.returncode == 0, first.output
    stamp = (tmp_path / "mine" / "result.json").stat().st_mtime_ns
    second = run_bench(*FAST, "task=cnn", "hydra.run.dir=mine", "seed=5")
    assert second.returncode == 1, second.output
    assert f"bench: {tmp_path / 'mine'} already holds another run" in second.output
    assert (tmp_path / "mine" / "result.json").stat().st_mtime_ns == stamp
    assert strict_json(tmp_path / "mine" / "result.json")["config"]["seed"] == 0


def test_a_second_sweep_into_the_same_directory_waits_for_the_first(bench_env, tmp_path):
    first = start(
        [
            "-m",
            *FAST,
            "task=cnn",
            "framework.options.fault=hang",
            "sweep=shared",
            "preset.timeout_s=120",
        ],
        bench_env,
        tmp_path,
    )
    lines = []
    assert read_until(first, "fake: hanging", lines), "".join(lines)
    second = start(["-m", *FAST, "task=rnn", "sweep=shared"], bench_env, tmp_path)
    waiting = []
    assert read_until(second, "held by pid", waiting), "".join(waiting)
    assert f"pid {first.pid}" in "".join(waiting)
    assert not (
        tmp_path / "results" / "sweeps" / "shared" / "framework=fake,preset=smoke,task=rnn"
    ).exists()  # it waited
    first.send_signal(signal.SIGTERM)
    first.communicate(timeout=60)
    rest = second.communicate(timeout=300)[0]
    assert "fake rnn cpu fp32 preset=smoke: train" in rest, "".join(waiting) + rest
    # the sweep directory's status: the first sweep's job, cut by SIGTERM, is interrupted
    assert second.returncode == 1, "".join(waiting) + rest
    cut = strict_json(
        tmp_path
        / "results"
        / "sweeps"
        / "shared"
        / "framework.options.fault=hang,framework=fake,preset.timeout_s=120,"
        "preset=smoke,task=cnn" / "result.json"
    )
    assert cut["error"] == "interrupted (SIGTERM); the worker was killed"


# sweep job directories are safe and bounded
def test_sweep_job_directories_stay_inside_the_sweep_and_are_bounded(run_bench, tmp_path):
    hostile = "/../../../../escaped"
    long = [f"+framework.env.BENCH_X{i}={'v' * 30}" for i in range(12)]  # 500 characters
    run = run_bench(
        "-m", *FAST, "task=cnn", f"task.description={hostile},plain", *long, "sweep=names"
    )
    assert run.returncode == 0, run.output
    sweep_dir = (tmp_path / "results" / "sweeps" / "names").resolve()
    assert not list(tmp_path.rglob("escaped*"))
    assert len(run.result_paths) == 2
    for path in run.result_paths:
        assert path.resolve().parent.parent == sweep_dir
        assert len(path.parent.name) <= 120 and "/" not in path.parent.name
    overrides = [strict_json(p)["overrides"] for p in run.result_paths]
    assert any(f"task.description={hostile}" in o for o in overrides)
    assert all(set(long) <= set(o) for o in overrides)  # every override, in full
    again = run_bench(
        "-m", *FAST, "task=cnn", f"task.description={hostile},plain", *long, "sweep=names"
    )
    assert again.output.count("skipped, already ok") == 2, again.output
