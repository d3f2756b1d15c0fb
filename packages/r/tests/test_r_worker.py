"""What is specific to the rows written in R (the shared end-to-end suite runs them through the
CLI): a machine without R gets the fix, not a crash; numpy 2 behind reticulate 1.28 is a clear
error, not an R object that silently is not one."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.run import capabilities

R_DIR = Path(__file__).resolve().parents[1]
HAS_R = shutil.which("Rscript") is not None


def test_a_machine_without_rscript_is_told_what_to_install(tmp_path):
    # the orchestrator's PATH without R: only this interpreter's directory
    env = dict(os.environ, PATH=os.path.dirname(sys.executable))
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "framework=r_mxnet", "task=cnn", "preset=smoke"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert (
        "framework=r_mxnet cannot start: R and reticulate is missing (Rscript is not on PATH)"
        in output
    ), output
    assert "r-base-core r-cran-reticulate" in output


def test_r_with_the_reference_blas_is_refused_for_mxnet_and_named(tmp_path):
    # an Rscript that has reticulate and loads Debian's reference BLAS (a stand-in: R's BLAS
    # is a property of the machine's R, not something a test may change)
    fake = tmp_path / "bin" / "Rscript"
    fake.parent.mkdir()
    fake.write_text(
        '#!/bin/sh\ncase "$2" in *extSoftVersion*) '
        "echo /usr/lib/x86_64-linux-gnu/blas/libblas.so.3;; esac\nexit 0\n"
    )
    fake.chmod(0o755)
    env = dict(os.environ, PATH=f"{fake.parent}{os.pathsep}{os.path.dirname(sys.executable)}")
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "framework=r_mxnet", "task=cnn", "preset=smoke"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert "R's BLAS is the reference BLAS (/usr/lib/x86_64-linux-gnu/blas/" in output, output
    assert "libopenblas0-pthread" in output


@pytest.mark.skipif(not HAS_R, reason="Rscript is not on PATH")
def test_converting_a_numpy2_array_to_r_is_a_clear_error(tmp_path):
    numpy_major = int(__import__("numpy").__version__.split(".")[0])
    if numpy_major < 2:
        pytest.skip("this interpreter has numpy < 2")
    script = tmp_path / "convert.R"
    script.write_text(
        "library(reticulate)\n"
        f"use_python({str(sys.executable)!r}, required = TRUE)\n"
        f"source({str(R_DIR / 'numpy2.R')!r})\n"
        "cat('scalar', py_to_r(import_builtins(convert = FALSE)$float(2.5)), '\\n')\n"
        "x <- py_to_r(import('numpy', convert = FALSE)$zeros(3L))\n"
        "cat('converted to', class(x), '\\n')\n"
    )
    proc = subprocess.run(["Rscript", str(script)], capture_output=True, text=True, timeout=300)
    assert "scalar 2.5" in proc.stdout, proc.stdout + proc.stderr  # Python scalars still convert
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "cannot convert numpy 2" in proc.stderr and "converted to" not in proc.stdout


@pytest.mark.skipif(not HAS_R, reason="Rscript is not on PATH")
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one core: nothing to tell apart")
def test_r_mxnet_threads_reach_openmp(run_bench):
    # R loads GNU OpenMP at its start, where libgomp reads OMP_NUM_THREADS once: the option
    # must be in Rscript's environment (r_start_env), or MXNet runs every core whatever it says
    small = capabilities.declared("r_mxnet")["test_overrides"]["rnn"]  # the e2e suite's sizes
    for threads, expected in ((1, 1), (0, len(os.sched_getaffinity(0)))):
        code, output, result = run_bench(
            "framework=r_mxnet",
            "task=rnn",
            "preset=smoke",
            *small,
            f"framework.options.threads={threads}",
        )
        assert code == 0, output
        settings = result["framework"]["settings"]
        assert settings["threads"] == expected
        assert settings["openmp_threads"] == expected, settings


def test_every_r_row_has_its_task_files():
    for framework in ("r_mxnet", "r_keras"):
        declared = capabilities.declared(framework)
        folder = R_DIR / declared["r_models"]
        assert (folder / "loop.R").is_file()
        for task in declared["capabilities"]["tasks"]:
            assert (folder / f"{task}.R").is_file(), (framework, task)


def test_r_keras_hands_the_runtime_one_fit_for_every_epoch():
    """r_keras' training tasks define train (loop.R's keras_train: one fit, bench_keras.loop's
    EpochClock bracketing each epoch), and the worker passes it on to the runtime."""
    declared = capabilities.declared("r_keras")
    folder = R_DIR / declared["r_models"]
    assert "keras_train <- function(model, epochs)" in (folder / "loop.R").read_text()
    for task in ("cnn", "rnn"):
        assert "\ntrain <- keras_train" in (folder / f"{task}.R").read_text(), task
    worker = (R_DIR / "worker.R").read_text()
    functions = worker[worker.index("TASK_FUNCTIONS <- c(") :].split(")")[0]
    assert '"train"' in functions


@pytest.mark.skipif(not HAS_R, reason="Rscript is not on PATH")
def test_r_keras_one_fit_records_every_epoch_and_stops_at_the_target(run_bench):
    """Through the CLI, R's one fit: a loss, a timed epoch and a curve point per epoch, each
    evaluation outside the window; and fit ends at the quality target where asked."""
    small = ["preset=smoke", "preset.train_examples=128", "preset.test_examples=64"]
    code, output, result = run_bench("framework=r_keras", "task=rnn", *small, "preset.epochs=2")
    assert code == 0, output
    assert len(result["losses"]) == len(result["timings"]["epoch"]) == 2
    assert [p["epoch"] for p in result["curve"]] == [1, 2]
    assert result["timings"]["evaluation"] > 0
    code, output, result = run_bench(
        "framework=r_keras",
        "task=rnn",
        *small,
        "preset.epochs=2",
        "task.quality_target.synthetic=0.0",
        "task.stop_at_target=true",
    )
    assert code == 0, output
    assert result["stopped_at_target"] == 1 and len(result["losses"]) == 1
