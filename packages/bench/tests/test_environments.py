"""Environment discovery: current interpreter, nox's environment, framework.python, or a
clear error that names the command that builds the environment."""

import os
import sys


def without_fake(env):
    env = dict(env)
    env["PYTHONPATH"] = ""  # bench_fake is no longer importable by the orchestrator
    return env


def test_missing_environment_names_the_nox_command(run_bench, bench_env, tmp_path):
    run = run_bench("framework=fake", "preset=smoke", env=without_fake(bench_env))
    assert run.returncode == 2 and run.result["status"] == "not_installed"
    assert "worker" not in run.result  # refused before any worker
    error = run.result["error"]
    assert error.startswith("framework=fake: bench_fake is not importable by ")
    assert "Build it with `nox -s fake`" in error and "framework.python=" in error
    assert str(tmp_path / "project" / ".nox" / "fake" / "bin" / "python") in error


def fake_interpreter(path, env):
    """A wrapper interpreter that can import bench_fake, like a nox-built environment."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\nPYTHONPATH={env["PYTHONPATH"]} exec {sys.executable} "$@"\n')
    path.chmod(0o755)
    return path


def test_nox_environment_is_found(run_bench, bench_env, tmp_path):
    python = fake_interpreter(tmp_path / "project" / ".nox" / "fake" / "bin" / "python", bench_env)
    run = run_bench("framework=fake", "preset=smoke", env=without_fake(bench_env))
    assert run.returncode == 0, run.output
    assert run.result["worker"] == {
        "python": str(python),
        "found_by": "nox session fake",
        "library_path": [],
    }


def test_library_path_reaches_that_framework_s_worker_only(run_bench, bench_env, tmp_path):
    """framework.library_path (CNTK's MPI shim) is expanded for the discovered environment and
    put in front of LD_LIBRARY_PATH of that worker; a framework without one sees ours."""
    fake_interpreter(tmp_path / "project" / ".nox" / "fake" / "bin" / "python", bench_env)
    env = dict(without_fake(bench_env), LD_LIBRARY_PATH="/ours")
    run = run_bench(
        "framework=fake",
        "preset=smoke",
        'framework.library_path=["{prefix}/lib/shim","/opt/lib"]',
        env=env,
    )
    assert run.returncode == 0, run.output
    prefix = tmp_path / "project" / ".nox" / "fake"
    expected = [f"{prefix}/lib/shim", "/opt/lib"]
    assert run.result["worker"]["library_path"] == expected
    assert run.result["framework"]["settings"]["ld_library_path"] == ":".join(expected + ["/ours"])
    run = run_bench("framework=fake", "preset=smoke", env=env)
    assert run.returncode == 0, run.output
    assert run.result["worker"]["library_path"] == []
    assert run.result["framework"]["settings"]["ld_library_path"] == "/ours"


def test_explicit_python(run_bench, bench_env, tmp_path):
    python = fake_interpreter(tmp_path / "elsewhere" / "python", bench_env)
    run = run_bench(
        "framework=fake", "preset=smoke", f"framework.python={python}", env=without_fake(bench_env)
    )
    assert run.returncode == 0, run.output
    assert run.result["worker"]["found_by"] == "framework.python"
    run = run_bench("framework=fake", "preset=smoke", f"framework.python={tmp_path}/nope")
    assert (run.returncode, run.result["status"]) == (2, "not_installed")
    assert run.result["error"] == f"framework.python={tmp_path}/nope does not exist"
    assert os.path.exists(sys.executable)
    run = run_bench(
        "framework=fake",
        "preset=smoke",
        f"framework.python={sys.executable}",
        env=without_fake(bench_env),
    )
    assert run.returncode == 2 and "cannot import bench_fake" in run.result["error"]
    assert run.result["status"] == "not_installed"
