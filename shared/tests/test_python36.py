"""The runtime must stay valid Python 3.6 (CNTK's interpreter): compile it with one.
This file runs under Python 3.6 too (the cntk session), so it is 3.6-valid itself."""

import glob
import os
import shutil
import subprocess

import pytest

PIPES = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "universal_newlines": True}

HERE = os.path.dirname(os.path.abspath(__file__))
RUNTIME = os.path.join(os.path.dirname(HERE), "bench_shared")


def find_python36():
    """python3.6 on PATH or in pyenv's versions; pyenv's shims are tried, not trusted."""
    candidates = [shutil.which("python3.6")]
    if shutil.which("pyenv"):
        root = subprocess.run(["pyenv", "root"], **PIPES).stdout.strip()
        candidates += sorted(glob.glob(os.path.join(root, "versions", "3.6*", "bin", "python3.6")))
    for candidate in filter(None, candidates):
        out = subprocess.run([candidate, "--version"], **PIPES)
        if out.returncode == 0 and (out.stdout + out.stderr).startswith("Python 3.6"):
            return candidate
    return None


@pytest.mark.skipif(find_python36() is None, reason="no python3.6 on PATH or in pyenv")
def test_runtime_compiles_under_python36(tmp_path):
    files = sorted(glob.glob(os.path.join(RUNTIME, "*.py")))
    assert len(files) >= 5
    out = subprocess.run(
        [
            find_python36(),
            "-c",
            "import sys, py_compile\n"
            "for f in sys.argv[1:]: py_compile.compile(f, cfile=f + 'c.tmp', "
            "doraise=True)",
            *files,
        ],
        **PIPES,
        cwd=tmp_path,
    )
    for f in files:
        if os.path.exists(f + "c.tmp"):
            os.remove(f + "c.tmp")
    assert out.returncode == 0, out.stderr
