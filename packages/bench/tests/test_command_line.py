"""The command line a newcomer meets, through `python -m bench` in a subprocess: the help and
its sub-commands, the version, mistakes answered with a suggestion, one help style for every
sub-command, `envs`, and rows whose environment is not built refused as not installed."""
import json
import re
import subprocess
import sys

import pytest

from bench.cli import SUBCOMMANDS

FAST = ["framework=fake", "preset=smoke"]


def test_help_lists_every_sub_command_and_a_few_recipes(run_bench):
    run = run_bench("--help")
    assert run.returncode == 0, run.output
    assert run.output.startswith("usage: python -m bench")
    for name in SUBCOMMANDS:
        assert re.search(rf"^  {name} +\S", run.output, re.M), name
    assert "python -m bench report results/" in run.output
    assert len(run.output.splitlines()) < 40  # a screen, not Hydra's config dump


def test_bare_command_shows_the_help_and_runs_nothing(run_bench):
    run = run_bench()
    assert run.returncode == 0 and "sub-commands:" in run.output
    assert not (run.cwd / "results").exists()


def test_version_is_bench_s_own(run_bench):
    run = run_bench("--version")
    assert run.returncode == 0
    assert re.match(r"bench \d+\.\d+\.\d+", run.output), run.output
    assert "Hydra" not in run.output


def test_a_misspelt_sub_command_gets_a_suggestion(run_bench):
    run = run_bench("reprot", "results")
    assert run.returncode == 2
    assert "'reprot' is not a sub-command; did you mean `report`?" in run.output
    assert "EQUAL" not in run.output and "Traceback" not in run.output


def test_adding_an_unknown_key_is_refused_like_setting_one(run_bench):
    top = run_bench(*FAST, "+precison=bf16")
    assert top.returncode == 2 and not top.result_paths
    assert "+precison=bf16: precison is not a key of the config; did you mean precision?" \
        in top.output
    nested = run_bench(*FAST, "+task.epochz=3")
    assert nested.returncode == 2 and "did you mean task.epochs?" in nested.output
    # where the schema has an open mapping, adding is what `+` is for
    added = run_bench(*FAST, "task=cnn", "+framework.env.BENCH_TEST_VARIABLE=1")
    assert added.returncode == 0, added.output
    assert added.result["config"]["framework"]["env"]["BENCH_TEST_VARIABLE"] == "1"


@pytest.mark.parametrize("name", [n for n in SUBCOMMANDS if n != "run"])
def test_every_sub_command_has_one_help_style(run_bench, name):
    run = run_bench(name, "--help")
    assert run.returncode == 0, run.output
    assert run.output.startswith(f"usage: python -m bench {name}"), run.output
    flags = re.findall(r"^  (--[\w-]+)", run.output, re.M)
    assert flags and len(flags) == len(set(flags)), flags  # each flag listed once
    bad = run_bench(name, "--no-such-flag")
    assert bad.returncode == 2 and "usage: python -m bench" in bad.output
    assert "Traceback" not in bad.output


def test_help_piped_into_head_ends_quietly(bench_env, tmp_path):
    proc = subprocess.Popen(f"{sys.executable} -m bench report --help | head -2", shell=True,
                            cwd=tmp_path, env=bench_env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=120)
    assert len(out.splitlines()) == 2 and "Traceback" not in err and "BrokenPipe" not in err, err


def test_verify_and_peak_take_a_run_s_key_value_spelling(run_bench):
    run = run_bench("verify", "framework=fake", "task=cnn", "--steps", "2")
    # the fake framework has no weight protocol: its check errs, but it is the one checked
    assert re.findall(r"^(\w+) (\w+): ", run.output, re.M) == [("fake", "cnn")], run.output
    unknown = run_bench("verify", "framework=nosuch")
    assert unknown.returncode == 2 and "unknown framework(s) ['nosuch']" in unknown.output
    peak = run_bench("peak", "framework=nosuch")
    assert peak.returncode == 2 and "unknown framework(s) ['nosuch']" in peak.output


def test_envs_says_which_environments_exist_and_how_to_build_the_others(run_bench):
    run = run_bench("envs")
    assert run.returncode == 0, run.output
    fake = re.search(r"^fake +fake +yes +3\.\d+\.\d+ .*current interpreter", run.output, re.M)
    assert fake, run.output  # importable here: the current interpreter
    assert re.search(r"^torch +torch +no +nox -s torch --install-only", run.output, re.M)
    for title in ("Open MPI", "CPython 3.6", "R and reticulate", "Chromium"):
        assert title in run.output
    data = json.loads(run_bench("envs", "--json").output)
    rows = {row["framework"]: row for row in data["frameworks"]}
    assert rows["fake"]["built"] and rows["fake"]["python"] == sys.version.split()[0]
    assert rows["cntk"]["needs"] == {"python3.6": "always", "mpi": "always"}
    assert {d["dependency"] for d in data["system"]} >= {"mpi", "r", "python3.6", "chromium"}


def test_a_row_that_is_not_installed_is_refused_not_failed(run_bench):
    run = run_bench("framework=torch", "preset=smoke", "task=cnn")
    assert run.returncode == 2, run.output
    result = run.result
    assert result["status"] == "not_installed" and "nox -s torch" in result["error"]
    assert "NOT_INSTALLED" in run.output and "exit_code" not in result


def test_comparison_presets_run_the_installed_rows_unless_asked_for_all(run_bench):
    run = run_bench("-m", "comparison=smoke", "task=rnn", timeout=900)
    assert run.returncode == 0, run.output
    assert re.search(r"comparison: 1 of \d+ frameworks are installed here; left out: .*torch",
                     run.output), run.output
    assert [json.loads(p.read_text())["config"]["framework"]["name"]
            for p in run.result_paths] == ["fake"]
    every = run_bench("-m", "comparison=smoke", "task=rnn", "framework=fake,torch",
                      "comparison.require_all=true")
    statuses = sorted(json.loads(p.read_text())["status"] for p in every.result_paths)
    assert statuses == ["not_installed", "ok"], every.output
    assert every.returncode == 0  # a comparison grid's blanks, listed in its table
    assert re.search(r"^\| PyTorch \| not installed", every.output, re.M), every.output


def shadow_path(directory, hidden):
    """A PATH of links to every program on ours but the `hidden` ones."""
    import os

    directory.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        for program in (os.listdir(folder) if os.path.isdir(folder) else []):
            target = directory / program
            if program not in hidden and not target.exists():
                target.symlink_to(os.path.join(folder, program))
    return str(directory)


@pytest.mark.skipif(subprocess.run([sys.executable, "-m", "nox", "--version"],
                                   capture_output=True).returncode != 0,
                    reason="nox is not installed here (nox -s core installs it)")
def test_sessions_whose_system_package_is_missing_skip_with_its_install_line(tmp_path):
    """Open MPI, R and the old CPythons hidden from PATH (pyenv too): the sessions that need
    them skip, each saying the line that installs what is missing, and nox succeeds."""
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    path = shadow_path(tmp_path / "bin", {"mpiexec", "Rscript", "pyenv", "python3.6",
                                          "python3.7"})
    env = dict(os.environ, PATH=path, PYENV_ROOT=str(tmp_path / "no-pyenv"))
    out = subprocess.run([sys.executable, "-m", "nox", "-f", str(root / "noxfile.py"),
                          "--envdir", str(tmp_path / "envs"), "-s", "cntk", "chainer_ideep",
                          "cntk_e2e", "r"], cwd=root, env=env, capture_output=True, text=True,
                         timeout=300)
    output = out.stdout + out.stderr
    assert out.returncode == 0, output
    assert output.count("skipped") >= 4, output
    assert "CPython 3.6 is missing" in output and "`pyenv install 3.6.15`" in output
    assert ("Open MPI is missing (mpiexec is not on PATH): `apt-get install "
            "--no-install-recommends openmpi-bin libopenmpi3`") in output
    assert "CPython 3.7 is missing" in output
    assert "R and reticulate is missing (Rscript is not on PATH): `apt-get install " \
           "--no-install-recommends r-base-core r-cran-reticulate" in output
