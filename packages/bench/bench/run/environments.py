"""Finding the interpreter of a framework's environment (docs/architecture.md: the path of
one run; the design's "Environment discovery").

Order: an explicit `framework.python`; the current interpreter when the framework package
and the framework itself are importable here; the environment `nox -s <session>` built.
Importability is checked with importlib.util.find_spec, which does not import anything, or
in a subprocess for another interpreter: the orchestrator never imports a framework.
"""

import importlib.util
import subprocess
import sys
from pathlib import Path

from .. import project_dir
from ..errors import EnvironmentNotFound
from . import r_worker

PROBE = (
    "import importlib.util, sys; "
    "sys.exit(0 if all(importlib.util.find_spec(m) for m in sys.argv[1:]) else 1)"
)


def found(module):
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a dotted name (bench_mxnet.gluon) whose parent is missing
        return False


def importable_here(*modules):
    return all(found(m) for m in modules)


def importable_in(python, *modules):
    try:
        return (
            subprocess.run(
                [str(python), "-c", PROBE, *modules], capture_output=True, timeout=120
            ).returncode
            == 0
        )
    except (OSError, subprocess.TimeoutExpired):
        return False


def nox_python(session, root=None) -> Path:
    root = Path(root or project_dir())
    binary = "Scripts/python.exe" if sys.platform == "win32" else "bin/python"
    return root / ".nox" / session / binary


def framework_python(fw):
    """(interpreter, how it was found) for a FrameworkConfig, or EnvironmentNotFound; for a
    row written in R (fw.r_models), R and reticulate are checked first."""
    if fw.r_models:
        r_worker.check(fw.name, fw.r_cblas)
    modules = (fw.package, fw.module, "bench_shared")
    if fw.python:
        if not Path(fw.python).exists():
            raise EnvironmentNotFound(f"framework.python={fw.python} does not exist")
        if not importable_in(fw.python, *modules):
            raise EnvironmentNotFound(
                f"framework.python={fw.python} cannot import {', '.join(modules)}: install "
                f"{fw.package} and its dependencies there, or build the environment with "
                f"`nox -s {fw.nox_session}`"
            )
        return str(fw.python), "framework.python"
    if importable_here(*modules):
        return sys.executable, "current interpreter"
    nox = nox_python(fw.nox_session)
    if nox.exists() and importable_in(nox, *modules):
        return str(nox), f"nox session {fw.nox_session}"
    raise EnvironmentNotFound(
        f"framework={fw.name}: {fw.package} is not importable by {sys.executable} and no "
        f"environment was found at {nox}. Build it with `nox -s {fw.nox_session}` in "
        f"{project_dir()}, or pass framework.python=/path/to/python of an environment "
        f"where `import {fw.package}` works."
    )


def declared_framework(name):
    """A framework's discovery fields from its conf/framework/<name>.yaml, read without Hydra
    (what framework_python needs: package, module, nox_session, python, the R fields)."""
    from types import SimpleNamespace

    from .capabilities import declared

    data = declared(name)
    return SimpleNamespace(
        name=name,
        package=data["package"],
        module=data["module"],
        nox_session=data["nox_session"],
        python=data.get("python"),
        r_models=data.get("r_models"),
        r_cblas=data.get("r_cblas", False),
    )


def installed(name):
    """Whether framework=<name>'s environment (and, for an R row, R) is found here; the reason
    (the command that builds it) when not."""
    try:
        framework_python(declared_framework(name))
    except EnvironmentNotFound as exc:
        return False, str(exc)
    return True, None
