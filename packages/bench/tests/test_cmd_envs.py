"""`python -m bench envs`: which environments exist here and how to build the others."""
import json
import re
import sys


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
