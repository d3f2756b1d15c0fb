"""`python -m bench envs`: which environments exist here and how to build the others."""

import json
import re
import sys
from pathlib import Path

import numpy as np
from locked_env import install_by_hand, locked_environment


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


def test_envs_and_a_run_say_when_an_environment_drifts_from_its_lock(
    run_bench, bench_env, tmp_path
):
    env, site = locked_environment(bench_env)
    run = run_bench("envs", "--refresh", env=env)
    assert run.returncode == 0, run.output
    assert re.search(r"^fake +locked \(locks/fake\.txt\)$", run.output, re.M), run.output
    done = run_bench("framework=fake", "task=cnn", "preset=smoke", env=env)
    assert done.result["worker"]["found_by"] == "nox session fake", done.output
    environment = done.result["environment"]
    assert environment["status"] == "locked" and environment["lock"] == "locks/fake.txt"
    assert environment["distributions"]["numpy"] == np.__version__
    # a package installed by hand, beside the lock
    install_by_hand(site)
    run = run_bench("envs", env=env)  # not --refresh: the environment's change is seen
    assert re.search(
        r"^fake +drifted from locks/fake\.txt: \+handmade-tool 1\.0$", run.output, re.M
    ), run.output
    done = run_bench("framework=fake", "task=cnn", "preset=smoke", env=env)
    assert done.result["environment"]["status"] == "drifted"
    assert done.result["environment"]["drift"] == [
        {"name": "handmade-tool", "locked": None, "installed": "1.0"}
    ]


def test_a_damaged_lock_or_marker_is_one_line_and_the_run_keeps_its_measurement(
    run_bench, bench_env, tmp_path
):
    """A lock that is not text, a marker whose overrides are not a list, a lock that is gone:
    `envs` says each in one line; a run in that environment still measures and records why
    its environment cannot be held to a lock."""
    env, site = locked_environment(bench_env)
    project = Path(bench_env["BENCH_PROJECT_DIR"])
    lock = project / "locks" / "fake.txt"
    marker = project / ".nox" / "fake" / "bench-environment.json"
    lock.write_bytes(lock.read_bytes() + b"\xff\xfe\xfd\n")
    run = run_bench("envs", "--refresh", env=env)
    assert run.returncode == 0, run.output
    assert re.search(
        r"^fake +lock unreadable: locks/fake\.txt is not UTF-8 text \(byte \d+\)$",
        run.output,
        re.M,
    ), run.output
    done = run_bench("framework=fake", "task=cnn", "preset=smoke", env=env)
    assert done.returncode == 0 and done.result["status"] == "ok", done.output
    assert done.result["stats"]["examples_per_second"] > 0
    assert done.result["environment"]["lock_problem"].startswith("lock unreadable")
    lock.unlink()
    run = run_bench("envs", "--refresh", env=env)
    assert re.search(r"^fake +no lock locks/fake\.txt \(the file the", run.output, re.M), run.output
    written = json.loads(marker.read_text())
    marker.write_text(json.dumps(dict(written, overrides="BENCH_TORCH_REQUIREMENT=torch")))
    run = run_bench("envs", "--refresh", env=env)
    assert run.returncode == 0, run.output
    assert 'its overrides are "BENCH_TORCH_REQUIREMENT=torch", not a list' in run.output
    done = run_bench("framework=fake", "task=cnn", "preset=smoke", env=env)
    assert (
        done.result["status"] == "ok"
        and "its overrides are" in done.result["environment"]["lock_problem"]
    )
