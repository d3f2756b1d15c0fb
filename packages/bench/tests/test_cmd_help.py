"""The command line a newcomer meets, through `python -m bench` in a subprocess: the help, the
version, a misspelt sub-command, every sub-command's help, and the run's key=value spelling
that sub-commands take too."""

import re
import subprocess
import sys

import pytest

from bench.cli import SUBCOMMANDS


def test_help_lists_every_sub_command_and_a_few_recipes(run_bench):
    run = run_bench("--help")
    assert run.returncode == 0, run.output
    assert run.output.startswith("usage: python -m bench")
    for name in SUBCOMMANDS:
        assert re.search(rf"^  {name} +\S", run.output, re.M), name
    assert "python -m bench report results/" in run.output
    assert len(run.output.splitlines()) < 40  # a screen, not Hydra's config dump


def test_run_help_is_the_axes_and_common_overrides_without_hydra(run_bench, bench_env, tmp_path):
    run = run_bench("run", "--help")
    assert run.returncode == 0, run.output
    assert run.output.startswith("usage: python -m bench [run] [key=value ...]"), run.output
    assert re.search(r"^  task +cnn, densenet, resnet50, rnn$", run.output, re.M), run.output
    assert re.search(r"^  framework +chainer, .* fake, ", run.output, re.M), run.output
    assert "framework.options.NAME=VALUE" in run.output and "--hydra-help" in run.output
    assert "powered by Hydra" not in run.output and len(run.output.splitlines()) < 45
    assert max(map(len, run.output.splitlines())) <= 100
    # read from conf/ alone: Hydra is not even imported
    timed = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "bench", "run", "--help"],
        cwd=tmp_path,
        env=bench_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert timed.returncode == 0 and not re.search(r"\| +(hydra|omegaconf)\b", timed.stderr)
    assert run_bench("task=rnn", "-h").output == run.output
    dump = run_bench("run", "--hydra-help")
    assert dump.returncode == 0 and "== Configuration groups ==" in dump.output, dump.output


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
    proc = subprocess.Popen(
        f"{sys.executable} -m bench report --help | head -2",
        shell=True,
        cwd=tmp_path,
        env=bench_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = proc.communicate(timeout=120)
    assert len(out.splitlines()) == 2 and "Traceback" not in err and "BrokenPipe" not in err, err


def test_verify_and_peak_take_a_run_s_key_value_spelling(run_bench):
    run = run_bench("verify", "framework=fake", "task=cnn", "--steps", "2")
    # the fake framework has no weight protocol: its check errs, but it is the one checked
    # (a line as it starts, one as it ends)
    assert re.findall(r"^(\w+) (\w+): ", run.output, re.M) == [("fake", "cnn")] * 2, run.output
    unknown = run_bench("verify", "framework=nosuch")
    assert unknown.returncode == 2 and "unknown framework(s) ['nosuch']" in unknown.output
    peak = run_bench("peak", "framework=nosuch")
    assert peak.returncode == 2 and "unknown framework(s) ['nosuch']" in peak.output
