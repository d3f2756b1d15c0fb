"""`python -m bench reproduce`: a recorded result run again, judged against the original by the
baseline rule; refused, naming what differs, where the checkout, the config or the packages
are not those that ran (real runs of the numpy stand-in, from a clean git checkout and a
lock-built environment: tests/fit_bundle.py)."""

import json
import os
import subprocess

from locked_env import install_by_hand

# RUN's repeats stay within a factor of two on a busy machine; a run slowed on purpose (five
# times the time per batch) is beyond it
CHANGE = ("--min-change", "1.0")


def test_a_result_run_again_on_its_machine_is_the_same(fit_bundle, tmp_path):
    done = fit_bundle.bench(
        "reproduce", *fit_bundle.results, "--repeats", "2", *CHANGE, "--out", tmp_path / "again"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "reproduce: fake cnn cpu fp32 preset=smoke: same within noise" in done.stdout
    assert "2 runs now against 3" in done.stdout
    again = [
        json.loads((tmp_path / "again" / f"run-{k}" / "result.json").read_text()) for k in (1, 2)
    ]
    recorded = json.loads(fit_bundle.results[0].read_text())
    assert [r["overrides"] for r in again] == [recorded["overrides"]] * 2
    assert all(r["environment"]["status"] == "locked" for r in again)


def test_a_run_slowed_on_purpose_is_slower(fit_bundle, tmp_path):
    slowed = dict(fit_bundle.env, FAKE_EXTRA_DELAY_MS="400")
    done = fit_bundle.bench(
        "reproduce",
        *fit_bundle.results,
        "--repeats",
        "2",
        *CHANGE,
        "--out",
        tmp_path / "again",
        env=slowed,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "reproduce: fake cnn cpu fp32 preset=smoke: slower: " in done.stdout


def test_another_commit_or_other_packages_are_refused_by_name(fit_bundle, tmp_path):
    commit = json.loads(fit_bundle.results[0].read_text())["host"]["git_commit"]
    git = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.org",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.org",
    )
    subprocess.run(
        ["git", "commit", "-q", "--allow-empty", "-m", "two"],
        cwd=fit_bundle.project,
        env=git,
        check=True,
    )
    install_by_hand(fit_bundle.site, "newer_tool", "3.0")
    try:
        done = fit_bundle.bench("reproduce", fit_bundle.results[0], "--out", tmp_path / "x")
    finally:
        subprocess.run(["git", "reset", "-q", "--hard", commit], cwd=fit_bundle.project, check=True)
        for info in fit_bundle.site.glob("newer_tool-*"):
            for file in info.iterdir():
                file.unlink()
            info.rmdir()
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"code: the result ran at commit {commit}, this checkout is at " in done.stderr
    assert "package: newer-tool 3.0 (recorded absent)" in done.stderr
    assert "refused" in done.stderr and not (tmp_path / "x").exists()


def test_a_result_that_is_not_ok_or_not_one_configuration_is_refused(fit_bundle, tmp_path):
    failed = fit_bundle.run("framework.options.fault=crash", into=tmp_path / "crash")
    done = fit_bundle.bench("reproduce", failed)
    assert done.returncode == 2 and "only ok results can be reproduced" in done.stderr
    done = fit_bundle.bench("reproduce", fit_bundle.results[0], failed)
    assert done.returncode == 2 and "is another configuration than" in done.stderr


def test_a_path_that_does_not_exist_is_one_line(fit_bundle, tmp_path):
    done = fit_bundle.bench("reproduce", tmp_path / "nowhere" / "result.json")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip() == (
        f"reproduce: {tmp_path / 'nowhere' / 'result.json'}: no such file or directory"
    )


def test_one_run_each_is_not_judged(fit_bundle, tmp_path):
    """The report's rule: two runs on each side at least (--min-runs), asked before any run."""
    done = fit_bundle.bench("reproduce", *fit_bundle.results, "--repeats", "1", "--anyway")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--repeats 1: the rule judges only with 2 runs or more on each side" in done.stderr
    alone = tmp_path / "alone" / "seed0" / "result.json"
    alone.parent.mkdir(parents=True)
    alone.write_bytes(fit_bundle.results[0].read_bytes())
    done = fit_bundle.bench("reproduce", alone, "--anyway")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "1 original run of this configuration (none beside it in" in done.stderr


def test_one_file_of_a_bundle_is_judged_against_every_run_beside_it(fit_bundle, tmp_path):
    done = fit_bundle.bench(
        "reproduce", fit_bundle.results[0], "--repeats", "2", *CHANGE, "--out", tmp_path / "a"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 runs now against 3" in done.stdout


def test_another_host_is_refused_and_never_judged(fit_bundle, tmp_path):
    """A result made on a CPU with other kernel-picking flags: refused naming them; with
    --anyway, a comparison of two hosts, not a verdict on this installation."""
    bundle = tmp_path / "zen4"
    for i, path in enumerate(fit_bundle.results):
        result = json.loads(path.read_text())
        result["host"]["cpu_flags"] = sorted(
            {*result["host"]["cpu_flags"], "avx512_bf16", "avx512f"} - {"amx_tile"}
        )
        result["host"]["cpu"] = "AMD EPYC 9R14"
        (bundle / f"seed{i}").mkdir(parents=True)
        (bundle / f"seed{i}" / "result.json").write_text(json.dumps(result))
    first = bundle / "seed0" / "result.json"
    done = fit_bundle.bench("reproduce", first, "--out", tmp_path / "x")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "reproduce: host: CPU " in done.stderr and "(recorded AMD EPYC 9R14)" in done.stderr
    assert "reproduce: host: CPU flags -avx512_bf16" in done.stderr or (
        "avx512_bf16" in done.stderr
    ), done.stderr
    done = fit_bundle.bench(
        "reproduce", first, "--anyway", "--repeats", "2", "--out", tmp_path / "y"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    line = [x for x in done.stdout.splitlines() if x.startswith("reproduce: fake cnn")][0]
    assert ": another host (" in line and "not judged" in line, line
    assert "same within noise" not in line and "slower" not in line.split("not judged")[0]


def test_a_commit_this_repository_does_not_have(fit_bundle, tmp_path):
    result = json.loads(fit_bundle.results[0].read_text())
    result["host"]["git_commit"] = "0123456789abcdef0123456789abcdef01234567"
    path = tmp_path / "b" / "seed0" / "result.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(result))
    done = fit_bundle.bench("reproduce", path, *fit_bundle.results[1:], "--out", tmp_path / "x")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "which this repository does not have" in done.stderr
    assert "git checkout 0123456789" not in done.stderr
