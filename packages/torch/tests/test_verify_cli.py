"""`python -m bench verify` exactly as the README writes it: from the repository root, no
--out (a relative default directory, results/verify/<time>/), while each worker starts in its
own run directory."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_readme_verify_command_from_the_repository_root():
    verify_dir = ROOT / "results" / "verify"
    before = set(verify_dir.glob("*")) if verify_dir.is_dir() else set()
    proc = subprocess.run([sys.executable, "-m", "bench", "verify", "--frameworks", "torch",
                           "--tasks", "rnn", "--steps", "2"], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    made = sorted(set(verify_dir.glob("*")) - before)
    try:
        assert proc.returncode == 0, proc.stdout + proc.stderr
        (report,) = [d / "verify.json" for d in made]
        (check,) = json.loads(report.read_text())
        assert check["status"] == "pass", check
    finally:
        for directory in made:
            shutil.rmtree(directory)
