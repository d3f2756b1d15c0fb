"""`python -m bench envs`: which environments exist here and how to build the others."""
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

import bench_shared


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


def locked_environment(bench_env, tmp_path):
    """(environment for the CLI, the fake framework's own environment): a virtual environment
    at <project>/.nox/fake, where discovery finds it once the fake is not importable here,
    seeing the test interpreter's packages, with a lock of exactly what it sees and the
    marker noxfile.py writes."""
    project = Path(bench_env["BENCH_PROJECT_DIR"])
    venv = project / ".nox" / "fake"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig."
                                "get_paths()['purelib'])"], capture_output=True, text=True,
                               check=True).stdout.strip())
    here = [p for p in sys.path if p.endswith("site-packages")]
    fake = Path(__file__).resolve().parent / "fake_framework"
    (site / "seen.pth").write_text("\n".join([*here, str(fake),
                                              str(Path(bench_shared.__file__).parents[1])]))
    seen = json.loads(subprocess.run([str(python), "-m", "bench_shared.environment"],
                                     capture_output=True, text=True, check=True).stdout)
    lock = project / "locks" / "fake.txt"
    lock.parent.mkdir(parents=True)
    lock.write_text("".join(f"{name}=={version} \\\n    --hash=sha256:{'0' * 64}\n"
                            for name, version in sorted(seen["distributions"].items())
                            if not name.startswith("bench")))
    (venv / "bench-environment.json").write_text(json.dumps({
        "environment": "fake", "lock": "locks/fake.txt",
        "lock_sha256": hashlib.sha256(lock.read_bytes()).hexdigest(), "python": "3",
        "installer": "uv", "overrides": [], "built": "2026-01-01T00:00:00Z"}))
    env = {k: v for k, v in bench_env.items() if k != "PYTHONPATH"}  # the fake: not here
    return env, site


def test_envs_and_a_run_say_when_an_environment_drifts_from_its_lock(run_bench, bench_env,
                                                                      tmp_path):
    env, site = locked_environment(bench_env, tmp_path)
    run = run_bench("envs", "--refresh", env=env)
    assert run.returncode == 0, run.output
    assert re.search(r"^fake +locked \(locks/fake\.txt\)$", run.output, re.M), run.output
    done = run_bench("framework=fake", "task=cnn", "preset=smoke", env=env)
    assert done.result["worker"]["found_by"] == "nox session fake", done.output
    environment = done.result["environment"]
    assert environment["status"] == "locked" and environment["lock"] == "locks/fake.txt"
    assert environment["distributions"]["numpy"] == np.__version__
    # a package installed by hand, beside the lock
    info = site / "handmade_tool-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: handmade_tool\nVersion: 1.0\n")
    run = run_bench("envs", env=env)  # not --refresh: the environment's change is seen
    assert re.search(r"^fake +drifted from locks/fake\.txt: \+handmade-tool 1\.0$", run.output,
                     re.M), run.output
    done = run_bench("framework=fake", "task=cnn", "preset=smoke", env=env)
    assert done.result["environment"]["status"] == "drifted"
    assert done.result["environment"]["drift"] == [
        {"name": "handmade-tool", "locked": None, "installed": "1.0"}]
