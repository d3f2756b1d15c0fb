"""`python -m bench tune` and `tuned=true` through the CLI in subprocesses, with real workers
of the numpy fake framework: its `delay_ms` costs real time per batch and its
`skip_training` candidate is fastest because it learns nothing (tests/fake_framework)."""

import json
import re
import signal
import sys
from pathlib import Path

import pytest
from cli_process import children, gone, read_until, start

from bench.tools.tune import rounds as tune_rounds

SMALL = ["preset.train_examples=1024", "preset.test_examples=256", "preset.epochs=1"]
linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="/proc and the parent-death signal are Linux's"
)


def profile_of(output):
    path = re.search(r"^profile: (.+)$", output, re.M)
    assert path, output
    return Path(path.group(1))


def test_tune_picks_the_faster_candidate_that_learns_and_tuned_true_applies_it(
    run_bench, own_cache, tmp_path
):
    env, cache = own_cache
    slow = "framework.options.delay_ms=100"  # the default sleeps; the candidate 0.0 does not
    run = run_bench("tune", "framework=fake", "task=cnn", slow, *SMALL, "--rounds", "2", env=env)
    assert run.returncode == 0, run.output
    assert "grid search over delay_ms {100.0, 0.0}, skip_training {false, true}" in run.output
    # skip_training=true ran, and fastest, but learned nothing: refused on accuracy
    assert re.search(
        r"skip_training=true: .*\(not eligible: accuracy 0\.\d+ < the default's", run.output
    ), run.output
    profile_path = profile_of(run.output)
    assert profile_path.is_relative_to(cache / "hosts")  # the cache, never the working tree
    assert profile_path.name == "fake_cnn_cpu_fp32.json"
    profile = json.loads(profile_path.read_text())
    assert profile["options"] == {"delay_ms": 0.0, "skip_training": False}
    assert profile["changed"] == "delay_ms=0.0" and profile["search"] == "grid"
    assert profile["speedup"] > 1 and profile["precision"] == "fp32"
    assert profile["host"]["cpu"] and "flags" in profile["host"]
    rounds = json.loads(profiles_rounds(profile_path).read_text())["measurements"]
    assert len(rounds) == 4 * 2 and {m["round"] for m in rounds} == {0, 1}
    # every round is a real run with its own result.json
    assert all(json.loads(Path(m["result"]).read_text())["status"] == "ok" for m in rounds)

    tuned = run_bench(
        "framework=fake", "task=cnn", "preset=smoke", slow, *SMALL, "tuned=true", env=env
    )
    assert tuned.returncode == 0, tuned.output
    r = tuned.result
    assert r["config"]["tuned"] is True
    assert r["tuning"]["profile"] == str(profile_path)
    assert r["tuning"]["options"] == {"delay_ms": 0.0, "skip_training": False}
    assert r["framework"]["settings"]["delay_ms"] == 0.0  # what the worker applied
    # an option named on the command line wins over the profile, and the record says so
    mine = run_bench(
        "framework=fake",
        "task=cnn",
        "preset=smoke",
        *SMALL,
        "tuned=true",
        "framework.options.skip_training=true",
        env=env,
    )
    assert mine.result["framework"]["settings"]["skip_training"] is True
    assert mine.result["tuning"]["command_line_wins"] == ["skip_training"]
    assert mine.result["framework"]["settings"]["delay_ms"] == 0.0


def test_coordinate_search_holds_the_best_so_far_and_confirms_against_the_default(
    run_bench, own_cache
):
    env, _ = own_cache
    run = run_bench(
        "tune",
        "framework=fake",
        "task=rnn",
        "framework.options.delay_ms=100",
        *SMALL,
        "--rounds",
        "1",
        "--search",
        "coordinate",
        env=env,
    )
    assert run.returncode == 0, run.output
    assert "coordinate search over delay_ms {100.0, 0.0}, skip_training {false, true}" in run.output
    profile_path = profile_of(run.output)
    profile = json.loads(profile_path.read_text())
    assert profile["options"] == {"delay_ms": 0.0, "skip_training": False}
    assert profile["search"] == "coordinate"
    rounds = json.loads(profiles_rounds(profile_path).read_text())["measurements"]
    stages = {}
    for m in rounds:
        stages.setdefault(m["stage"], []).append(m["settings"]["options"])
    assert list(stages) == ["options.delay_ms", "options.skip_training", "confirm"]
    # the second switch is tried with the first at its best value so far
    assert stages["options.skip_training"] == [
        {"delay_ms": 0.0, "skip_training": False},
        {"delay_ms": 0.0, "skip_training": True},
    ]
    # and the result once more against the default, in the same window
    assert stages["confirm"] == [
        {"delay_ms": 100.0, "skip_training": False},
        {"delay_ms": 0.0, "skip_training": False},
    ]


def profiles_rounds(profile_path):
    return profile_path.with_name(profile_path.stem + ".rounds.json")


def test_tuned_without_a_profile_says_how_to_make_one(run_bench, own_cache):
    env, _ = own_cache
    run = run_bench("framework=fake", "task=rnn", "preset=smoke", "tuned=true", env=env)
    assert run.returncode == 1, run.output
    r = run.result
    assert r["status"] == "failed" and "worker" not in r  # no worker started
    assert "tuned=true: no tuning profile for framework=fake task=rnn" in r["error"]
    assert (
        "Run `python -m bench tune framework=fake task=rnn device=cpu precision=fp32` "
        "first" in r["error"]
    )
    assert r["host"]["cpu"]


def test_a_resumed_tune_skips_the_rounds_it_finished(run_bench, own_cache):
    env, _ = own_cache
    args = ["tune", "framework=fake", "task=rnn", *SMALL]
    first = run_bench(*args, "--rounds", "1", env=env)
    assert first.returncode == 0, first.output
    assert "2 runs, 0 finished rounds kept from before" in first.output
    rounds_file = profiles_rounds(profile_of(first.output))
    before = json.loads(rounds_file.read_text())["measurements"]
    more = run_bench(*args, "--rounds", "2", env=env)
    assert more.returncode == 0, more.output
    assert "2 runs, 2 finished rounds kept from before" in more.output
    after = json.loads(rounds_file.read_text())["measurements"]
    assert after[:2] == before and [m["round"] for m in after[2:]] == [1, 1]
    again = run_bench(*args, "--rounds", "2", env=env)
    assert "0 runs, 4 finished rounds kept from before" in again.output
    # the rounds of another tune (other candidates) are not mixed in
    other = run_bench(*args, "framework.tuning.options.lr=[0.1]", env=env)
    assert other.returncode == 2
    assert "holds the rounds of a different tune" in other.output
    assert "--restart discards them" in other.output


def test_a_round_that_failed_runs_again_when_the_same_tune_runs_again(run_bench, own_cache):
    """A round that failed for a reason outside the config (here: the default's, as an
    unwritable results directory left it) is run again, not replayed; the line says how many
    and that --restart discards them all."""
    env, _ = own_cache
    args = ["tune", "framework=fake", "task=rnn", *SMALL, "--rounds", "1"]
    first = run_bench(*args, env=env)
    assert first.returncode == 0, first.output
    rounds_file = profiles_rounds(profile_of(first.output))
    work = json.loads(rounds_file.read_text())
    default = work["measurements"][0]
    assert default["settings"]["options"] == {"skip_training": False}, default
    default.update(
        status="failed",
        throughput=None,
        accuracy=None,
        error="orchestrator error: OSError: [Errno 30] Read-only file system",
    )
    rounds_file.write_text(json.dumps(work))
    again = run_bench(*args, env=env)
    assert again.returncode == 0, again.output
    assert (
        "tune: 1 of 2 kept rounds did not run ok; they run again (--restart discards every "
        "kept round)"
    ) in again.output
    assert "1 runs, 1 finished rounds kept from before" in again.output
    statuses = [m["status"] for m in json.loads(rounds_file.read_text())["measurements"]]
    assert statuses == ["ok", "ok"]


@linux_only
def test_ctrl_c_kills_the_worker_and_keeps_the_finished_rounds(own_cache, tmp_path):
    env, _ = own_cache
    # two candidates: the default finishes, then fault=hang hangs in its worker
    proc = start(
        [
            "tune",
            "framework=fake",
            "task=rnn",
            *SMALL,
            "--rounds",
            "1",
            "framework.tuning.options.skip_training=[]",
            "framework.tuning.options.fault=[hang]",
        ],
        env,
        tmp_path,
    )
    lines = []
    assert read_until(proc, "fake: hanging", lines), "".join(lines)
    (worker,) = children(proc.pid)
    proc.send_signal(signal.SIGINT)
    output = "".join(lines) + proc.communicate(timeout=60)[0]
    assert proc.returncode == 130, output
    assert gone(worker)
    kept = re.search(
        r"interrupted \(Ctrl-C\): the running worker was killed; 1 finished "
        r"rounds kept in (.+); the same command resumes",
        output,
    )
    assert kept, output
    rounds = json.loads(Path(kept.group(1)).read_text())["measurements"]
    assert [(m["stage"], m["status"]) for m in rounds] == [("grid", "ok")]
    assert not list(Path(kept.group(1)).parent.glob("*_rnn_cpu_fp32.json")), (
        "a profile was written by an interrupted tune"
    )


def test_a_candidate_that_failed_a_round_is_not_run_again(run_bench, own_cache):
    env, _ = own_cache
    run = run_bench(
        "tune",
        "framework=fake",
        "task=rnn",
        *SMALL,
        "--rounds",
        "3",
        "framework.tuning.options.skip_training=[]",
        "framework.tuning.options.fault=[crash]",
        env=env,
    )
    assert run.returncode == 0, run.output
    assert "fault=crash: out (not ok in round 1); its later rounds are not run" in run.output
    rounds = json.loads(profiles_rounds(profile_of(run.output)).read_text())["measurements"]
    ran = [(m["settings"]["options"]["fault"], m["round"], m["status"]) for m in rounds]
    assert ran == [("none", 0, "ok"), ("crash", 0, "failed"), ("none", 1, "ok"), ("none", 2, "ok")]
    assert json.loads(profile_of(run.output).read_text())["changed"] == "default"


def test_compare_precision_reports_a_ratio_and_never_tunes_precision(run_bench, own_cache):
    env, _ = own_cache
    # the fake declares fp32 alone; declaring bf16 too lets it run the same numpy code there
    both = "framework.capabilities.precisions.cpu=[fp32,bf16]"
    run = run_bench(
        "tune",
        "framework=fake",
        "task=rnn",
        both,
        *SMALL,
        "--rounds",
        "1",
        "--compare-precision",
        "bf16",
        env=env,
    )
    assert run.returncode == 0, run.output
    assert re.search(
        r"bf16 would run at \d+\.\d\dx the examples/s of fp32 with the tuned "
        r"settings \(accuracy ",
        run.output,
    ), run.output
    profile_path = profile_of(run.output)
    assert profile_path.name == "fake_rnn_cpu_fp32.json"
    profile = json.loads(profile_path.read_text())
    # not in the profile a run takes its settings from
    assert profile["precision"] == "fp32" and "precision" not in profile["options"]
    assert not [key for key in profile if "bf16" in key or "compar" in key], profile
    rounds = json.loads(profiles_rounds(profile_path).read_text())["measurements"]
    compared = [m for m in rounds if m["stage"] == "precision.bf16"]
    assert sorted(m["precision"] for m in compared) == ["bf16", "fp32"]
    bf16_run = json.loads(
        Path(next(m["result"] for m in compared if m["precision"] == "bf16")).read_text()
    )
    assert bf16_run["config"]["precision"]["name"] == "bf16"
    # a precision the framework does not run is refused before anything runs
    refused = run_bench(
        "tune", "framework=fake", "task=rnn", "--compare-precision", "bf16", env=env
    )
    assert refused.returncode == 2
    assert "precision=bf16 is not supported by framework=fake" in refused.output


def test_tune_refuses_what_it_cannot_tune(run_bench, own_cache):
    env, _ = own_cache
    nothing = run_bench(
        "tune", "framework=fake", "task=rnn", "framework.tuning.options.skip_training=[]", env=env
    )
    assert nothing.returncode == 2
    assert "framework=fake declares nothing to tune" in nothing.output
    unnamed = run_bench("tune", "task=rnn", env=env)
    assert unnamed.returncode == 2 and "name the framework" in unnamed.output
    stacked = run_bench("tune", "framework=fake", "task=rnn", "tuned=true", env=env)
    assert stacked.returncode == 2 and "tuned= has no place in a tune" in stacked.output
    # a switch left out for one task (tuning.skip): not tried there, still tried elsewhere
    skipped = run_bench(
        "tune", "framework=fake", "task=rnn", "+framework.tuning.skip.rnn=[skip_training]", env=env
    )
    assert skipped.returncode == 2
    assert "framework=fake declares nothing to tune" in skipped.output
    other = run_bench(
        "tune",
        "framework=fake",
        "task=rnn",
        *SMALL,
        "--rounds",
        "1",
        "+framework.tuning.skip.cnn=[skip_training]",
        env=env,
    )
    assert other.returncode == 0 and "search over skip_training {false, true}" in other.output
    for bad, says in (
        (
            ["+framework.tuning.skip.rnn=[skip_trainin]"],
            "skip_trainin is neither an option of framework=fake",
        ),
        (["+framework.tuning.skip.lstm=[skip_training]"], "lstm is not a task"),
    ):
        refused = run_bench("tune", "framework=fake", "task=rnn", *bad, env=env)
        assert refused.returncode == 2 and says in refused.output, refused.output


def rounds(*throughputs):
    return tune_rounds.CandidateRounds(
        {"options": {}, "env": {}},
        "fp32",
        [{"status": "ok", "throughput": t, "accuracy": 0.9} for t in throughputs],
    )


def test_a_challenger_replaces_the_incumbent_only_beyond_the_rounds_noise():
    # two rounds each of two settings that do the same thing (Keras' GRU, AMD EPYC): the
    # medians are 10 % apart, the rounds overlap
    assert not tune_rounds.clearly_faster(rounds(486.7, 430.8), rounds(398.8, 446.4), 0.03)
    # iDeep off against on for Chainer's GRU, same machine: apart
    assert tune_rounds.clearly_faster(rounds(127.5, 136.2), rounds(103.8, 106.4), 0.03)
    # apart, but less than the minimum gain
    assert not tune_rounds.clearly_faster(rounds(102.0, 102.5), rounds(100.0, 100.5), 0.03)
    # one round has no spread to judge: the minimum gain alone
    assert tune_rounds.clearly_faster(rounds(110.0), rounds(100.0), 0.03)
    assert not tune_rounds.clearly_faster(rounds(102.0), rounds(100.0), 0.03)


def test_densenet_tunes_at_a_short_run_unless_the_command_line_sizes_it(run_bench, own_cache):
    env, _ = own_cache
    run = run_bench(
        "tune",
        "framework=fake",
        "task=densenet",
        "task.image_size=32",
        "preset.epochs=1",
        "--rounds",
        "1",
        env=env,
    )
    assert run.returncode == 0, run.output
    profile = json.loads(profile_of(run.output).read_text())
    assert "preset.train_examples=128" in profile["overrides"]
    rounds = json.loads(profiles_rounds(profile_of(run.output)).read_text())["measurements"]
    result = json.loads(Path(rounds[0]["result"]).read_text())
    # SHORT_RUN's sizes, but the command line's epochs
    preset = result["config"]["preset"]
    assert (preset["name"], preset["train_examples"], preset["test_examples"]) == ("smoke", 128, 64)
    assert result["effective_task"]["epochs"] == 1


def test_tuned_true_refuses_a_profile_measured_against_other_defaults(run_bench, own_cache):
    env, _ = own_cache
    run = run_bench("tune", "framework=fake", "task=rnn", *SMALL, "--rounds", "1", env=env)
    assert run.returncode == 0, run.output
    path = profile_of(run.output)
    profile = json.loads(path.read_text())
    assert (
        run_bench(
            "framework=fake", "task=rnn", "preset=smoke", *SMALL, "tuned=true", env=env
        ).returncode
        == 0
    )
    # as if a release had changed the default the tune measured its candidates against
    profile["defaults"]["options"]["skip_training"] = True
    path.write_text(json.dumps(profile))
    stale = run_bench("framework=fake", "task=rnn", "preset=smoke", *SMALL, "tuned=true", env=env)
    assert stale.returncode != 0
    assert (
        "defaults changed since" in stale.output and "skip_training: True -> False" in stale.output
    ), stale.output
    # unless this run's command line sets it
    mine = run_bench(
        "framework=fake",
        "task=rnn",
        "preset=smoke",
        *SMALL,
        "tuned=true",
        "framework.options.skip_training=false",
        env=env,
    )
    assert mine.returncode == 0, mine.output


def host_file(cache, name):
    """A file kept for this host's fake rnn fp32 tune (bench.run.profiles' layout)."""
    from bench.run import profiles, sysinfo

    profile = profiles.profile_path(str(cache), sysinfo.host_key(), "fake", "rnn", "cpu", "fp32")
    path = profile if name == "profile" else profiles.working_path(profile)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


@pytest.mark.parametrize("content", ["[]", '{"version": 1, "options": "fast", "env": {}}'])
def test_tuned_true_refuses_a_profile_of_another_shape_in_one_line(run_bench, own_cache, content):
    env, cache = own_cache
    path = host_file(cache, "profile")
    path.write_text(content)
    run = run_bench("framework=fake", "task=rnn", "preset=smoke", "tuned=true", env=env)
    assert run.returncode == 1 and "Traceback" not in run.output, run.output
    error = run.result["error"]
    assert error.startswith(f"tuned=true: {path} is not a tuning profile ("), error
    assert error.endswith(
        "run `python -m bench tune framework=fake task=rnn device=cpu precision=fp32` again"
    ), error
    assert "worker" not in run.result  # refused before a worker started


@pytest.mark.parametrize(
    "content,says",
    [
        (b"[]", "is not a tune's working file (not an object with a list of measurements)"),
        (
            b'{"fingerprint": {}, "measurements": [{"stage": "grid"}]}',
            "is not a tune's working file (measurement 1 has key None)",
        ),
        ('{"measurements": []}'.encode("utf-16")[:-1], "is not JSON ("),
    ],
)
def test_a_rounds_file_of_another_shape_stops_the_tune_in_one_line(
    run_bench, own_cache, content, says
):
    env, cache = own_cache
    path = host_file(cache, "rounds")
    path.write_bytes(content)
    args = ["tune", "framework=fake", "task=rnn", *SMALL, "--rounds", "1"]
    run = run_bench(*args, env=env)
    assert run.returncode == 2 and "Traceback" not in run.output, run.output
    (line,) = [line for line in run.output.splitlines() if str(path) in line]
    assert line.startswith(f"tune: {path} {says}") and line.endswith("--restart discards it")
    if content == b"[]":  # the command it names starts afresh
        again = run_bench(*args, "--restart", env=env)
        assert again.returncode == 0, again.output
