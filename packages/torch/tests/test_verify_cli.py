"""`python -m bench verify` exactly as the README writes it: from the repository root, no
--out (a relative default directory, results/verify/<time>/), while each worker starts in its
own run directory."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def test_readme_verify_command_from_the_repository_root():
    verify_dir = ROOT / "results" / "verify"
    before = set(verify_dir.glob("*")) if verify_dir.is_dir() else set()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "verify",
            "--frameworks",
            "torch",
            "--tasks",
            "rnn",
            "--steps",
            "2",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    made = sorted(set(verify_dir.glob("*")) - before)
    try:
        assert proc.returncode == 0, proc.stdout + proc.stderr
        (report,) = [d / "verify.json" for d in made]
        (check,) = json.loads(report.read_text())
        assert check["status"] == "pass", check
    finally:
        for directory in made:
            shutil.rmtree(directory)


def test_verify_int8_calibrates_and_agrees_with_the_reference(tmp_path):
    """`verify --precision int8`: the worker calibrates on other images before predicting, and
    the agreement with the float64 reference is within conf/precision/int8.yaml's tolerances."""
    from bench_shared import worker

    if not hasattr(worker, "calibration"):
        pytest.skip("the worker does not call bench_shared.calibration: verify cannot calibrate")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "verify",
            "--frameworks",
            "torch",
            "--tasks",
            "resnet50",
            "--precision",
            "int8",
            "--out",
            str(tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (check,) = json.loads((tmp_path / "verify.json").read_text())
    assert check["status"] == "pass" and check["top1_agreement"] >= 0.5, check
    # int8 rounds: an error far above fp32's 1e-7 shows the quantized model ran
    assert 1e-3 < check["output_error"] <= 0.12, check
