"""The host watched during every run, through the CLI on real runs of the numpy stand-in: a
CPU-bound process beside a run flags it disturbed (status still ok) with the reason; an edited
host record is refused where results are read; a baseline measured beside a busy neighbour is
"not judged", never "slower"; a sweep in rounds sets a disturbed run aside and runs it again
later in its round; the settings a sweep cannot run with are one line.

The tests' conf/ leaves every run undisturbed (conftest.WATCH_FOR_TESTS); these tests set the
watch's thresholds on the command line. A CI machine runs another session beside the suite,
so a test asserts what a neighbour's full core must cause, never that a run was quiet."""

import json
import multiprocessing
import re
import subprocess
import sys
import time

import pytest
from cli_process import FAST

from bench.run import hostwatch

# the defaults (bench/run/config.py WatchConfig), over the tests' conf/
WATCHED = [
    "watch.max_steal=0.05",
    "watch.max_others=0.10",
    "watch.max_canary_slowdown=0.25",
]
CNN = [*FAST, "task=cnn", "preset.train_examples=512", "framework.options.delay_ms=30"]


def burn(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


class Burner:
    """A CPU-bound process on another core for as long as the block lasts."""

    def __enter__(self):
        self.process = multiprocessing.get_context("spawn").Process(target=burn, args=(600,))
        self.process.start()
        time.sleep(0.3)  # running before the run under test starts
        return self

    def __exit__(self, *exc):
        self.process.kill()
        self.process.join()


def test_a_run_records_the_host_during_its_timed_windows(run_bench):
    run = run_bench(*CNN, *WATCHED)
    assert run.returncode == 0, run.output
    result = run.result
    state = result["host_state"]
    assert result["schema_version"] == 3
    assert state["watched"] and state["source"] == "/proc/stat", state
    assert state["span"]["windows"] == len(result["timings"]["epoch"]) == 3
    assert 0 <= state["steal"] <= 1 and 0 <= state["others"] <= 1
    assert state["canary"]["slowdown"] >= 0 and state["canary"]["reference"]["gemm_s"] > 0
    assert state["thresholds"] == {
        "max_steal": 0.05,
        "max_others": 0.10,
        "max_canary_slowdown": 0.25,
    }
    assert [w["region"] for w in result["windows"]] == ["epoch"] * 3


def test_a_cpu_bound_neighbour_flags_the_run_disturbed_and_keeps_it_ok(run_bench, tmp_path):
    with Burner():
        run = run_bench(*CNN, *WATCHED)
    assert run.returncode == 0, run.output  # flagged, still a measurement
    state = run.result["host_state"]
    assert run.result["status"] == "ok" and state["disturbed"], state
    assert any(r.startswith("other processes took") for r in state["reasons"]), state
    assert state["others"] > 0.25, state  # a core of two


def test_an_edited_host_record_does_not_follow_from_its_counters(run_bench, tmp_path):
    run = run_bench(*CNN, *WATCHED)
    path = run.result_paths[0]
    result = json.loads(path.read_text())
    result["host_state"]["disturbed"] = not result["host_state"]["disturbed"]
    path.write_text(json.dumps(result))
    check = run_bench("check", str(path), "--min-runs", "1")
    assert check.returncode == 1, check.output
    assert "figures: host_state.disturbed: " in check.output, check.output
    result["host_state"]["disturbed"] = not result["host_state"]["disturbed"]
    result["host_state"]["others"] = 0.0 if result["host_state"]["others"] else 0.5
    path.write_text(json.dumps(result))
    check = run_bench("check", str(path), "--min-runs", "1")
    assert "figures: host_state.others: " in check.output, check.output


def test_a_baseline_beside_a_busy_neighbour_is_not_judged(run_bench, tmp_path):
    """The issue's A/A case: one configuration measured twice, the second time beside a
    CPU-bound process: never "slower", "not judged" with the host's figures."""
    sweep = ["-m", *CNN, *WATCHED, "seed=0,1,2", "rounds.retries=0"]
    assert run_bench(*sweep, "sweep=quiet").returncode == 0
    with Burner():
        busy = run_bench(*sweep, "sweep=busy")
    assert busy.returncode == 0, busy.output
    report = run_bench(
        "report",
        str(tmp_path / "results/sweeps/busy"),
        "--baseline",
        str(tmp_path / "results/sweeps/quiet"),
        "--out",
        str(tmp_path / "r"),
        "--no-charts",
    )
    assert report.returncode == 0, report.output
    text = (tmp_path / "r" / "report.md").read_text()
    (line,) = [x for x in text.splitlines() if x.startswith("| Fake (numpy) | CNN |")]
    verdict = line.strip("| ").split(" | ")[-1]
    assert verdict.startswith(
        "not judged: the host was busy during the current runs (other processes took"
    ), line
    (finding,) = json.loads((tmp_path / "r" / "report.json").read_text())["baseline"]
    assert not finding["flagged"] and not finding["verdict"].startswith("slower"), finding


def test_a_sweep_in_rounds_runs_a_disturbed_run_again_later_in_its_round(bench_env, tmp_path):
    """A neighbour for the first runs of a sweep: those runs are flagged, kept aside in
    disturbed-<n>/ and run again later in their round, each round's order and every run's
    place recorded in rounds.json and in the results."""
    args = ["-m", *CNN, *WATCHED, "framework.options.delay_ms=20,40", "seed=0,1", "sweep=r"]
    with Burner():
        started = subprocess.Popen(
            [sys.executable, "-m", "bench", *args],
            cwd=tmp_path,
            env=bench_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        output = ""
        for line in started.stdout:  # the neighbour stays for the first run only
            output += line
            if line.startswith("result: "):
                break
    output += started.communicate(timeout=600)[0]
    assert started.returncode == 0, output
    sweep = tmp_path / "results" / "sweeps" / "r"
    plan = json.loads((sweep / "rounds.json").read_text())
    assert len(plan["rounds"]) == 2 and plan["order"] == "rounds"
    first = plan["runs"][0]
    assert first["disturbed"] and first["attempt"] == 1, first
    assert "queued again later in round 1" in output, output
    aside = sorted(sweep.rglob("disturbed-1/result.json"))
    assert aside, output
    again = [r for r in plan["runs"] if r["overrides"] == first["overrides"]]
    assert [r["attempt"] for r in again][:2] == [1, 2], again
    results = [json.loads(p.read_text()) for p in sweep.glob("*/result.json")]
    assert len(results) == 4 and all(r["config"]["round"]["order"] == "rounds" for r in results)
    assert {r["config"]["round"]["index"] for r in results} == {0, 1}


@pytest.mark.parametrize(
    "setting, said",
    [
        ("rounds.repeats=0", "rounds.repeats=0: must be 1 or more"),
        ("rounds.retries=-1", "rounds.retries=-1: must be 0 or more"),
        ("rounds.tie_band=0", "rounds.tie_band=0.0: must be more than 0"),
        ("rounds.order=random", "rounds.order=random: one of rounds, back_to_back"),
    ],
)
def test_a_setting_no_sweep_can_run_with_is_one_line(run_bench, setting, said):
    run = run_bench("-m", *CNN, "seed=0,1", setting)
    assert run.returncode == 2, run.output
    assert re.search(rf"^bench: {re.escape(said)}$", run.output, re.M), run.output
    assert "Traceback" not in run.output and not run.result_paths


def test_where_the_system_gives_no_counters_the_result_says_so(monkeypatch, tmp_path):
    monkeypatch.setattr(hostwatch, "STAT", str(tmp_path / "no-such-stat"))
    sampler = hostwatch.Sampler(0.05)
    assert sampler.record() == {
        "available": False,
        "why": f"no {tmp_path}/no-such-stat on this system",
    }
    state = hostwatch.state(
        sampler.record(),
        [{"region": "epoch", "start": 0.0, "end": 1.0}],
        None,
        {"max_steal": 0.05, "max_others": 0.1, "max_canary_slowdown": 0.25},
    )
    assert state["watched"] is False and "no-such-stat" in state["why"]
    assert state["disturbed"] is False
