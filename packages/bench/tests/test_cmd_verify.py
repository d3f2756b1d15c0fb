"""`python -m bench verify` through the command line: the README's command as written (relative
paths), a line per check as it starts and ends, and bad arguments in one line."""

import json
import re
import subprocess
import sys


# the README's verify command, without --out: a relative default directory
def test_verify_as_the_readme_writes_it_hands_the_worker_absolute_paths(bench_env, tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "verify",
            "--frameworks",
            "fake",
            "--tasks",
            "cnn",
            "--steps",
            "0",
        ],
        cwd=tmp_path,
        env=bench_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = proc.stdout + proc.stderr
    (report,) = (tmp_path / "results" / "verify").glob("*/verify.json")
    (check,) = json.loads(report.read_text())
    # the worker found its run.json and the neutral weights, and got as far as the fake
    # framework, which has no weight slots (the real frameworks' sessions run verify fully)
    assert "No such file" not in output and "FileNotFoundError" not in output, output
    assert "slots" in check["detail"], check


def test_verify_with_negative_steps_is_refused(run_bench):
    run = run_bench("verify", "--frameworks", "fake", "--tasks", "cnn", "--steps", "-3")
    assert run.returncode == 2 and "Traceback" not in run.output, run.output
    assert "--steps -3: the number of training steps, 0 (none) or more" in run.output
    assert not (run.cwd / "results").exists()  # refused before anything ran


def test_verify_with_an_unknown_framework_is_one_line(run_bench):
    run = run_bench("verify", "--frameworks", "nope")
    assert run.returncode == 2 and "Traceback" not in run.output, run.output
    assert "unknown framework(s) ['nope']; known: " in run.output


def test_verify_says_each_check_as_it_starts_and_as_it_ends(run_bench):
    run = run_bench("verify", "--frameworks", "fake,torch", "--tasks", "cnn,rnn", "--steps", "0")
    lines = re.findall(r"^(fake|torch) (cnn|rnn): (checking \.\.\.|\w+)", run.output, re.M)
    assert lines == [
        (fw, task, what)
        for fw, status in [("fake", "error"), ("torch", "not_installed")]
        for task in ("cnn", "rnn")
        for what in ("checking ...", status)
    ], run.output
