"""The package README's plain Chainer install, as written, in a fresh virtual environment with the
newest pip the registry serves: Chainer 7.8.1's sdist must build whatever the pip version
(pip >= 25.3 no longer applies PIP_CONSTRAINT to isolated builds). Needs the package registry,
as the nox sessions do; about a minute."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def readme_install_command():
    text = (ROOT / "packages" / "chainer" / "README.md").read_text()
    section = text[text.index("## Installing") :]
    return re.search(r"```bash\n(.+?)```", section, re.S).group(1)


def test_readme_plain_install_builds_chainer_with_the_newest_pip(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = dict(
        os.environ,
        PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
        VIRTUAL_ENV=str(venv),
        PIP_NO_CACHE_DIR="1",
    )  # build it: no cached wheel
    env.pop("PYTHONPATH", None)
    env.pop("PIP_CONSTRAINT", None)
    subprocess.run(
        ["python", "-m", "pip", "install", "--quiet", "--upgrade", "pip"], env=env, check=True
    )
    proc = subprocess.run(
        ["bash", "-ec", readme_install_command()],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    check = subprocess.run(
        ["python", "-c", "import chainer, bench_chainer, pip; print(chainer.__version__)"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert check.stdout.strip() == "7.8.1", check.stderr
