"""Sweeps through `python -m bench -m`: two frameworks (the fake one and a copy, fake2), a job
that crashes, re-runs that skip what is done and retry what failed, redo=true, Ctrl-C, the
end-of-sweep summary, the comparison presets and the submitit launcher."""

import json
import re
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from mdtable import parse_table
from omegaconf import OmegaConf

from bench.report import tables
from bench.run import capabilities, config, hydra_hooks, sweep

SMOKE = ["preset=smoke"]
# one hardware and precision: named once after the legend, the columns are the tasks alone
COLUMN = re.compile(r"^(CNN|RNN)$")


@pytest.fixture
def sweep_env(bench_env, conf_copy, tmp_path):
    """The tests' conf/ plus `fake2`, a second framework config for the same numpy package."""
    conf = tmp_path / "conf"
    shutil.copytree(conf_copy, conf)
    fake = (conf / "framework" / "fake.yaml").read_text()
    (conf / "framework" / "fake2.yaml").write_text(
        fake.replace("name: fake\n", "name: fake2\n").replace("Fake (numpy)", "Fake2 (numpy)")
    )
    return dict(bench_env, BENCH_CONF_DIR=str(conf))


def results_by_job(paths):
    return {p.parent.name: json.loads(p.read_text()) for p in paths}


def summary_cells(sweep_dir):
    """{(row, task): cell} of summary.md, with the one hardware column per task (and its ×
    column, the ratio to the fastest row, left out here)."""
    text = (sweep_dir / "summary.md").read_text()
    assert re.search(r"All runs: .*, fp32, data synthetic, preset smoke\.", text), text
    table = parse_table(text)
    cells = {}
    for row, columns in table.items():
        columns = {c: v for c, v in columns.items() if not c.endswith(" ×")}
        assert all(COLUMN.match(c) for c in columns), columns
        cells.update({(row, c.split()[0].lower()): v for c, v in columns.items()})
    return cells


def expected_cell(result):
    """The default metric, steady examples per second, of one run (n=1: no range)."""
    return (
        f"{tables.number(result['stats']['examples_per_second'])} (n=1) · "
        f"{tables.percent(result['accuracy'])}"
    )


def test_sweep_skips_finished_jobs_retries_failed_ones_and_redo_runs_all(run_bench, sweep_env):
    conf = Path(sweep_env["BENCH_CONF_DIR"])
    crash = conf / "task_framework" / "rnn_fake2.yaml"  # only fake2 x rnn crashes
    crash.write_text("# @package _global_\nframework:\n  options:\n    fault: crash\n")
    args = ["-m", "framework=fake,fake2", "task=cnn,rnn", *SMOKE]

    first = run_bench(*args, env=sweep_env)
    assert first.returncode == 1, first.output  # a job failed, the sweep went on
    sweep_dir = first.cwd / "results" / "sweeps" / "framework=fake,fake2_preset=smoke_task=cnn,rnn"
    assert {p.parent.parent for p in first.result_paths} == {sweep_dir}
    results = results_by_job(first.result_paths)
    assert {job: r["status"] for job, r in results.items()} == {
        "framework=fake,preset=smoke,task=cnn": "ok",
        "framework=fake,preset=smoke,task=rnn": "ok",
        "framework=fake2,preset=smoke,task=cnn": "ok",
        "framework=fake2,preset=smoke,task=rnn": "failed",
    }
    cells = summary_cells(sweep_dir)
    assert cells == {
        ("Fake (numpy)", "cnn"): expected_cell(results["framework=fake,preset=smoke,task=cnn"]),
        ("Fake (numpy)", "rnn"): expected_cell(results["framework=fake,preset=smoke,task=rnn"]),
        ("Fake2 (numpy)", "cnn"): expected_cell(results["framework=fake2,preset=smoke,task=cnn"]),
        ("Fake2 (numpy)", "rnn"): "failed",
    }
    assert "| Fake2 (numpy) |" in first.output  # printed too
    with open(sweep_dir / "results.csv") as f:
        assert len(f.readlines()) == 1 + 4
    stamps = {p: (p.stat().st_mtime_ns, p.read_text()) for p in first.result_paths}

    crash.unlink()  # the problem is fixed: the same command again
    second = run_bench(*args, env=sweep_env)
    assert second.returncode == 0, second.output
    assert second.output.count("skipped, already ok") == 3
    assert second.output.count("retrying: ") == 1
    assert sorted(second.result_paths) == sorted(first.result_paths)  # the summary has all
    for path, stamp in stamps.items():
        if "fake2,preset=smoke,task=rnn" in path.parent.name:
            assert json.loads(path.read_text())["status"] == "ok"
        else:
            assert (path.stat().st_mtime_ns, path.read_text()) == stamp  # untouched
    assert "failed" not in summary_cells(sweep_dir).values()

    third = run_bench(*args, "redo=true", env=sweep_env)
    assert third.returncode == 0, third.output
    assert "skipped" not in third.output
    assert sorted(third.result_paths) == sorted(first.result_paths)  # same job directories
    assert all(p.stat().st_mtime_ns != stamps[p][0] for p in third.result_paths)


def test_only_done_results_with_the_same_config_are_kept(tmp_path, capsys):
    node = config.compose(
        ["framework=torch", "task=cnn", "preset=smoke", "+framework.options.lr=0.5"], typed=False
    )
    cfg = OmegaConf.to_container(node, resolve=True)
    stored = {
        "schema_version": 1,
        "status": "ok",
        "config": dict(cfg, sweep="named"),
        "stats": {"train_seconds": 1.0, "examples_per_second": 100.0},
        "accuracy": 0.5,
    }
    (tmp_path / "result.json").write_text(json.dumps(stored))
    assert sweep.finished_result(tmp_path, cfg, redo=False) == stored  # sweep/redo: no matter
    assert sweep.finished_result(tmp_path, cfg, redo=True) is None
    changed = json.loads(json.dumps(cfg))
    changed["framework"]["options"]["lr"] = 0.1
    assert sweep.finished_result(tmp_path, changed, redo=False) is None
    assert "framework.options.lr: 0.5 -> 0.1" in capsys.readouterr().out
    for status, kept in [("unsupported", True), ("failed", False)]:
        (tmp_path / "result.json").write_text(json.dumps(dict(stored, status=status)))
        assert (sweep.finished_result(tmp_path, cfg, redo=False) is not None) == kept
    (tmp_path / "result.json").write_text("{truncated")
    assert sweep.finished_result(tmp_path, cfg, redo=False) is None


def test_ctrl_c_keeps_finished_results(bench_env, tmp_path):
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bench",
            "-m",
            "framework=fake",
            "task=cnn",
            *SMOKE,
            "framework.options.fault=none,hang",
            "sweep=interrupted",
        ],
        cwd=tmp_path,
        env=bench_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        # a shell's background job starts with SIGINT ignored, and Python keeps that: restore it
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    watchdog = threading.Timer(120, proc.kill)
    watchdog.start()
    output = []
    for line in proc.stdout:
        output.append(line)
        if "fake: hanging" in line:  # the second job is running: Ctrl-C
            proc.send_signal(signal.SIGINT)
    returncode = proc.wait()
    watchdog.cancel()
    output = "".join(output)
    assert returncode == 130, output
    sweep_dir = tmp_path / "results" / "sweeps" / "interrupted"
    done = json.loads(
        (
            sweep_dir / "framework.options.fault=none,framework=fake,preset=smoke,"
            "task=cnn" / "result.json"
        ).read_text()
    )
    assert done["status"] == "ok" and done["accuracy"] > 0.5
    cut = json.loads(
        (
            sweep_dir / "framework.options.fault=hang,framework=fake,preset=smoke,"
            "task=cnn" / "result.json"
        ).read_text()
    )
    assert cut["status"] == "interrupted" and cut["error"].startswith("interrupted (Ctrl-C)")
    assert "finished results are kept" in output and (sweep_dir / "summary.md").is_file()


def test_submitit_local_sweep_completes(run_bench):
    pytest.importorskip(
        "hydra_plugins.hydra_submitit_launcher", reason="pip install 'packages/bench[slurm]'"
    )
    run = run_bench(
        "-m", "hydra/launcher=submitit_local", "framework=fake", "task=cnn,rnn", *SMOKE, timeout=300
    )
    assert run.returncode == 0, run.output
    sweep_dir = run.cwd / "results" / "sweeps" / "framework=fake_preset=smoke_task=cnn,rnn"
    paths = sorted(sweep_dir.glob("*/result.json"))
    assert [p.parent.name for p in paths] == [
        "framework=fake,preset=smoke,task=cnn",
        "framework=fake,preset=smoke,task=rnn",
    ]
    assert all(json.loads(p.read_text())["status"] == "ok" for p in paths)
    assert len(list(sweep_dir.glob(".submitit/*/*_result.pkl"))) == 2  # run by submitit
    # the summary read the files the other processes wrote
    cells = summary_cells(sweep_dir)
    assert set(cells) == {("Fake (numpy)", "cnn"), ("Fake (numpy)", "rnn")}
    assert all("·" in cell for cell in cells.values())
    assert "| Fake (numpy) |" in run.output
    # again: the submitit jobs find their results and skip
    stamps = [p.stat().st_mtime_ns for p in paths]
    again = run_bench(
        "-m", "hydra/launcher=submitit_local", "framework=fake", "task=cnn,rnn", *SMOKE, timeout=300
    )
    assert again.returncode == 0, again.output
    assert [p.stat().st_mtime_ns for p in paths] == stamps
    logs = "".join(p.read_text() for p in sweep_dir.glob(".submitit/*/*_log.out"))
    assert logs.count("skipped, already ok") == 2


def test_comparison_presets_sweep_every_framework_and_task(conf_copy, monkeypatch):
    """With comparison.require_all=true every framework; without it, those installed here
    (test_sweep.py runs both through the command line)."""
    monkeypatch.setenv("BENCH_CONF_DIR", str(conf_copy))
    hydra_hooks.install()
    for name in ("full", "smoke"):
        with initialize_config_dir(config_dir=str(conf_copy), version_base="1.3"):
            cfg = compose(
                "config",
                overrides=[f"comparison={name}", "comparison.require_all=true"],
                return_hydra_config=True,
            )
        params = cfg.hydra.sweeper.params
        assert params.framework.split(",") == capabilities.framework_names()
        assert params.task == "cnn,resnet50,rnn"
        assert cfg.preset.name == name


def test_agreement_preset_sweeps_training_tasks_and_seeds_from_neutral_weights(
    conf_copy, monkeypatch
):
    monkeypatch.setenv("BENCH_CONF_DIR", str(conf_copy))
    hydra_hooks.install()
    with initialize_config_dir(config_dir=str(conf_copy), version_base="1.3"):
        cfg = compose(
            "config",
            overrides=["comparison=agreement", "comparison.require_all=true"],
            return_hydra_config=True,
        )
    params = cfg.hydra.sweeper.params
    assert params.framework.split(",") == capabilities.framework_names()
    assert params.task == "cnn,rnn"
    assert params.seed == "0,1,2"
    assert (cfg.init.name, cfg.preset.name) == ("neutral", "smoke")


def test_comparison_preset_narrowed_on_the_command_line(run_bench):
    run = run_bench("-m", "comparison=smoke", "framework=fake", "task=rnn")
    assert run.returncode == 0, run.output
    (path,) = run.result_paths  # the command line's framework and task replace the lists
    assert path.parent == (
        run.cwd
        / "results"
        / "sweeps"
        / "comparison=smoke_framework=fake_task=rnn"
        / "framework=fake,task=rnn"
    )
    assert json.loads(path.read_text())["config"]["preset"]["name"] == "smoke"


def test_refused_cells_of_a_comparison_preset_are_its_blanks(run_bench):
    """An inference runtime's cnn/rnn in comparison=full are blanks of the table, not an
    error; the same refusal in a user's own sweep exits 2."""
    preset = run_bench("-m", "comparison=smoke", "framework=fake", "task=rnn", "precision=bf16")
    assert preset.returncode == 0, preset.output
    (path,) = preset.result_paths
    assert json.loads(path.read_text())["status"] == "unsupported"
    own = run_bench("-m", "framework=fake", "task=rnn", "precision=bf16", *SMOKE)
    assert own.returncode == 2, own.output


def test_bad_sweep_name_is_one_line(run_bench):
    run = run_bench("-m", "sweep=a/b", "framework=fake", *SMOKE)
    assert run.returncode == 2
    assert run.output.strip() == "bench: sweep=a/b: a sweep name is one directory name, without '/'"


def test_sweep_names():
    assert (
        sweep.sweep_name(None, ["task=cnn,rnn", "framework=torch"])
        == "framework=torch_task=cnn,rnn"
    )  # sorted: the order on the command line is no matter
    assert sweep.sweep_name(None, ["task=cnn", "redo=true", "sweep=x"]) == "task=cnn"
    assert sweep.sweep_name(None, []) == "defaults"
    assert sweep.sweep_name("nightly", ["task=cnn"]) == "nightly"
    odd = sweep.sweep_name(None, ["framework.python=/opt/env/bin/python"])
    assert "/" not in odd and odd.startswith("framework.python=-opt-env-bin-python-")
    long = sweep.sweep_name(None, [f"framework.options.x{i}=1,2" for i in range(30)])
    assert len(long) <= sweep.MAX_NAME
    assert long != sweep.sweep_name(None, [f"framework.options.x{i}=1,2" for i in range(31)])
    with pytest.raises(ValueError):
        sweep.sweep_name("a/b", [])


def test_job_names_are_safe_and_bounded():
    assert sweep.job_name("framework=fake,task=cnn") == "framework=fake,task=cnn"
    hostile = sweep.job_name("task.description=/../../x,task=cnn")
    assert "/" not in hostile and hostile.startswith("task.description=-..-..-x,task=cnn-")
    long = sweep.job_name(",".join(f"framework.options.x{i}=1" for i in range(40)))
    assert len(long) <= sweep.MAX_NAME


def test_comparison_presets_run_the_installed_rows_unless_asked_for_all(run_bench):
    run = run_bench("-m", "comparison=smoke", "task=rnn", timeout=900)
    assert run.returncode == 0, run.output
    assert re.search(
        r"comparison: 1 of \d+ frameworks are installed here; left out: .*torch", run.output
    ), run.output
    assert [json.loads(p.read_text())["config"]["framework"]["name"] for p in run.result_paths] == [
        "fake"
    ]
    every = run_bench(
        "-m", "comparison=smoke", "task=rnn", "framework=fake,torch", "comparison.require_all=true"
    )
    statuses = sorted(json.loads(p.read_text())["status"] for p in every.result_paths)
    assert statuses == ["not_installed", "ok"], every.output
    # every framework was asked for and one is not installed: 2, as for any run (an
    # unsupported cell alone is the table's blank: test_refused_cells_of_a_comparison_preset...)
    assert every.returncode == 2, every.output
    # refused cells are not in the table; one line names them
    assert re.search(
        r"^Not in the table, refused before starting: 1 not_installed \(PyTorch\)",
        every.output,
        re.M,
    ), every.output


def test_a_comparison_preset_without_m_is_one_line(run_bench):
    run = run_bench("comparison=smoke", "task=rnn")
    assert run.returncode == 2, run.output
    assert run.output.strip().splitlines() == [
        "bench: comparison=smoke: a comparison preset is a sweep over every installed "
        "framework; run it with -m: python -m bench -m comparison=smoke"
    ]
    assert not (run.cwd / "results").exists()
