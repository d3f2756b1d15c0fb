"""`python -m bench verify` exactly as the README writes it: no --out (a relative default
directory under the working directory), run from a directory other than the run's."""
import json
import subprocess
import sys


def test_readme_verify_command_passes(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "bench", "verify", "--frameworks", "torch",
                           "--tasks", "rnn", "--steps", "2"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (report,) = (tmp_path / "results" / "verify").glob("*/verify.json")
    (check,) = json.loads(report.read_text())
    assert check["status"] == "pass", check
