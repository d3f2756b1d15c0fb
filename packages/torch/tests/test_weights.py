"""A wrong conversion must fail: the shared conformance checks and `bench verify` end to end,
with bench_torch_wrong (tests/wrong_conversion: the CNN's first kernel loaded transposed)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import bench
from bench_shared import conformance

WRONG = Path(__file__).parent / "wrong_conversion"


@pytest.fixture
def torch_wrong(monkeypatch):
    monkeypatch.syspath_prepend(str(WRONG))
    return conformance.Framework(yaml.safe_load((WRONG / "torch_wrong.yaml").read_text()))


def test_the_conformance_suite_catches_a_transposed_kernel(torch_wrong):
    with pytest.raises(conformance.ConformanceError, match="differ from the NumPy reference"):
        conformance.check_reference_forward(torch_wrong, "cnn")
    with pytest.raises(conformance.ConformanceError, match="differ from the reference's"):
        conformance.check_training_steps(torch_wrong, "cnn")
    conformance.check_export_round_trip(torch_wrong, "cnn")  # swapped back: only outputs show it
    conformance.check_reference_forward(torch_wrong, "rnn")


def test_verify_matrix_end_to_end_catches_a_wrong_conversion(tmp_path):
    conf = tmp_path / "conf"
    shutil.copytree(bench.conf_dir(), conf)
    shutil.copy(WRONG / "torch_wrong.yaml", conf / "framework" / "torch_wrong.yaml")
    env = dict(
        os.environ,
        BENCH_CONF_DIR=str(conf),
        PYTHONPATH=os.pathsep.join(filter(None, [str(WRONG), os.environ.get("PYTHONPATH")])),
    )
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "verify",
            "--frameworks",
            "torch,torch_wrong",
            "--tasks",
            "cnn,rnn",
            "--steps",
            "5",
            "--out",
            str(tmp_path / "verify"),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 1, out.stdout + out.stderr
    rows = {
        line.split()[0]: line
        for line in out.stdout.splitlines()
        if line.split()[1:2] in (["pass"], ["FAIL"])
    }  # the matrix, not the progress lines
    torch_row, wrong_row = rows["torch"], rows["torch_wrong"]
    assert torch_row.count("pass") == 2 and "FAIL" not in torch_row
    assert wrong_row.split()[1] == "FAIL" and "pass" in wrong_row  # cnn fails, rnn passes
    assert "torch_wrong cnn: FAIL - output error" in out.stdout
    report = json.loads((tmp_path / "verify" / "verify.json").read_text())
    assert {(c["framework"], c["task"], c["status"]) for c in report} == {
        ("torch", "cnn", "pass"),
        ("torch", "rnn", "pass"),
        ("torch_wrong", "cnn", "FAIL"),
        ("torch_wrong", "rnn", "pass"),
    }
