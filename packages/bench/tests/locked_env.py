"""A framework environment as noxfile.py builds one, for the fake framework: a virtual
environment at <project>/.nox/fake (where discovery finds it once the fake is not importable
from the test's own interpreter) that sees the test interpreter's packages, a lock of exactly
what it sees, and the marker noxfile.py writes; and a project directory that is a clean git
checkout. What `envs`, `check` and `reproduce` read is then real."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import bench_shared

FAKE = Path(__file__).resolve().parent / "fake_framework"


def git_project(project: Path):
    """Make project a git checkout with one commit and a clean tree; its commit."""
    project.mkdir(parents=True, exist_ok=True)
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.org",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.org",
    )
    (project / "README").write_text("a checkout\n")
    for args in (["init", "-q"], ["add", "README"], ["commit", "-q", "-m", "one"]):
        subprocess.run(["git", *args], cwd=project, env=env, check=True)
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=project, capture_output=True, text=True, check=True
    ).stdout.strip()


def locked_environment(bench_env):
    """(an environment for the CLI in which the fake runs from <project>/.nox/fake, that
    environment's site-packages)."""
    project = Path(bench_env["BENCH_PROJECT_DIR"])
    venv = project / ".nox" / "fake"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    here = [p for p in sys.path if p.endswith("site-packages")]
    (site / "seen.pth").write_text(
        "\n".join([*here, str(FAKE), str(Path(bench_shared.__file__).parents[1])])
    )
    seen = json.loads(
        subprocess.run(
            [str(python), "-m", "bench_shared.environment"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    lock = project / "locks" / "fake.txt"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text(
        "".join(
            f"{name}=={version} \\\n    --hash=sha256:{'0' * 64}\n"
            for name, version in sorted(seen["distributions"].items())
            if not name.startswith("bench")
        )
    )
    (venv / "bench-environment.json").write_text(
        json.dumps(
            {
                "environment": "fake",
                "lock": "locks/fake.txt",
                "lock_sha256": hashlib.sha256(lock.read_bytes()).hexdigest(),
                "python": "3",
                "installer": "uv",
                "overrides": [],
                "built": "2026-01-01T00:00:00Z",
            }
        )
    )
    env = {k: v for k, v in bench_env.items() if k != "PYTHONPATH"}  # the fake: not here
    return env, site


def install_by_hand(site: Path, name="handmade_tool", version="1.0"):
    """A distribution put into an environment outside its lock."""
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
