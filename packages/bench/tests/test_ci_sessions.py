"""noxfile.py's sessions on a machine that lacks a system package: they skip, naming the line
that installs it (nox in a subprocess)."""

import subprocess
import sys
from pathlib import Path

import pytest


def shadow_path(directory, hidden):
    """A PATH of links to every program on ours but the `hidden` ones."""
    import os

    directory.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        for program in os.listdir(folder) if os.path.isdir(folder) else []:
            target = directory / program
            if program not in hidden and not target.exists():
                target.symlink_to(os.path.join(folder, program))
    return str(directory)


@pytest.mark.skipif(
    subprocess.run([sys.executable, "-m", "nox", "--version"], capture_output=True).returncode != 0,
    reason="nox is not installed here (nox -s core installs it)",
)
def test_sessions_whose_system_package_is_missing_skip_with_its_install_line(tmp_path):
    """Open MPI, R and the old CPythons hidden from PATH (pyenv too): the sessions that need
    them skip, each saying the line that installs what is missing, and nox succeeds."""
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    path = shadow_path(tmp_path / "bin", {"mpiexec", "Rscript", "pyenv", "python3.6", "python3.7"})
    env = dict(os.environ, PATH=path, PYENV_ROOT=str(tmp_path / "no-pyenv"))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "nox",
            "-f",
            str(root / "noxfile.py"),
            "--envdir",
            str(tmp_path / "envs"),
            "-s",
            "cntk",
            "chainer_ideep",
            "cntk_e2e",
            "r",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = out.stdout + out.stderr
    assert out.returncode == 0, output
    assert output.count("skipped") >= 4, output
    assert "CPython 3.6 is missing" in output and "`pyenv install 3.6.15`" in output
    assert (
        "Open MPI is missing (mpiexec is not on PATH): `apt-get install "
        "--no-install-recommends openmpi-bin libopenmpi3`"
    ) in output
    assert "CPython 3.7 is missing" in output
    assert (
        "R and reticulate is missing (Rscript is not on PATH): `apt-get install "
        "--no-install-recommends r-base-core r-cran-reticulate" in output
    )


def test_ci_asks_the_project_which_system_packages_are_missing(tmp_path):
    """.ci/run installs what bench/run/system.py finds missing (the checks the sessions' skips
    and `envs` make), not checks of its own: on a PATH without any of them, every Debian
    package of every dependency."""
    root = Path(__file__).resolve().parents[3]
    script = (root / ".ci" / "run").read_text()
    assert "system.py --apt-missing" in script
    assert "command -v mpiexec" not in script and "ldconfig" not in script
    done = subprocess.run(
        [sys.executable, str(root / "packages/bench/bench/run/system.py"), "--apt-missing"],
        capture_output=True,
        text=True,
        env={"PATH": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        "openmpi-bin",
        "libopenmpi3",
        "r-base-core",
        "r-cran-reticulate",
        "libopenblas0-pthread",
        "chromium",
        "chromium-driver",
        "slurm-wlm",
        "munge",
    ]
