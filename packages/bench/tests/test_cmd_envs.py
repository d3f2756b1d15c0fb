"""`python -m bench envs`: which environments exist here and how to build the others."""

import json
import re
import sys

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
