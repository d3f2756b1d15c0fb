"""`python -m bench framework=cntk ...` end to end from the orchestrator's interpreter: a real
CNTK worker in the Python 3.6 environment, real results."""
import json
import subprocess
import sys

import pytest

from bench_shared import spec


@pytest.mark.parametrize("task,chance,floor", [("cnn", 0.1, 0.5), ("rnn", 0.5, 0.7)])
def test_training_learns_the_synthetic_data(run_bench, task, chance, floor):
    code, output, result = run_bench("framework=cntk", f"task={task}", "preset=smoke")
    assert code == 0, output
    assert result["status"] == "ok"
    assert result["python"].startswith("3.6.")
    assert result["worker"]["found_by"] == "nox session cntk"
    assert result["worker"]["library_path"][0].endswith("/lib/bench-mpi-shim")
    assert result["param_count"] == spec.TASKS[task].param_count
    assert result["accuracy"] > floor, result["accuracy"]  # far above chance
    assert result["losses"][-1] < result["losses"][0]
    settings = result["framework"]["settings"]
    assert settings["threads"] >= 1 and settings["device"] == "cpu"
    assert result["framework"]["versions"]["cntk"] == "2.7"
    assert result["framework"]["versions"]["devices"] == ["cpu"]
    assert result["stats"]["examples_per_second"] > 0
    assert 0 < result["stats"]["utilisation"] < 1.5 and result["peak_flops"] > 1e9
    assert f"cntk {task} cpu fp32 preset=smoke: train" in output


def test_frozen_model_stays_at_chance(run_bench):
    code, output, result = run_bench("framework=cntk", "task=rnn", "preset=smoke",
                                     "task.optimizer.lr=0.0", "preset.epochs=1")
    assert code == 0, output
    assert 0.4 < result["accuracy"] < 0.6


def test_resnet50_inference(run_bench):
    code, output, result = run_bench("framework=cntk", "task=resnet50", "preset=smoke")
    assert code == 0, output
    assert result["param_count"] == spec.ResNet50.param_count
    assert result["features"]["finite"]
    assert result["stats"]["seconds_per_1000_images"] > 0
    assert "s per 1000 images" in output


def test_fp16_on_cpu_is_refused_before_a_worker_starts(run_bench):
    code, output, result = run_bench("framework=cntk", "task=cnn", "precision=fp16")
    assert code == 2
    assert result["status"] == "unsupported"
    assert result["error"] == ("precision=fp16 is not supported by framework=cntk on "
                               "device=cpu; supported there: fp32")


def test_without_the_mpi_shim_the_error_names_the_fix(run_bench):
    code, output, result = run_bench("framework=cntk", "task=cnn", "preset=smoke",
                                     "framework.library_path=[]")
    assert code == 1, output
    assert "libmpi" in result["error"] and "apt-get install libopenmpi3" in result["error"]
    assert "python -m bench_cntk.mpi_shim" in result["error"]


def test_verify_passes(tmp_path):
    out = subprocess.run([sys.executable, "-m", "bench", "verify", "--frameworks", "cntk",
                          "--out", str(tmp_path / "verify")],
                         cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads((tmp_path / "verify" / "verify.json").read_text())
    assert {(c["task"], c["status"]) for c in report} == {
        ("cnn", "pass"), ("resnet50", "pass"), ("rnn", "pass")}
    print(out.stdout)  # the errors against the reference, for the record (pytest -s)
