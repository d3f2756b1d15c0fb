"""One nox session per framework, each in its own virtual environment, so that conflicting
pins never meet. `nox -s <framework>` builds the environment that `python -m bench
framework=<framework>` then finds in .nox/<framework>; `--install-only` builds it without
running the tests.

    nox                           # the whole test suite (what .ci/run runs)
    nox -s torch --install-only   # just build the PyTorch environment
"""
import glob
import os
import shutil
import subprocess

import nox

nox.options.download_python = "never"  # interpreters come from the machine (PATH, pyenv)
nox.options.sessions = ["lint", "core", "torch", "tensorflow", "keras", "cntk", "cntk_e2e"]

RUNTIME = ["-e", "shared", "-e", "packages/bench"]

# The framework table: adding a framework adds one entry here (plus packages/<fw>/ and
# conf/framework/<fw>.yaml). "requires" is installed first so that pip keeps those pins.
FRAMEWORKS = {
    "torch": {
        "python": None,  # the interpreter running nox
        "package": "packages/torch",
        # the CPU build: a plain `torch` from PyPI is a multi-GB CUDA build on Linux;
        # BENCH_TORCH_REQUIREMENT=torch picks whatever pip finds (e.g. your CUDA index)
        "requires": [os.environ.get("BENCH_TORCH_REQUIREMENT", "torch==2.13.0")],
    },
    "tensorflow": {
        "python": None,
        "package": "packages/tensorflow",
        # the CPU build here; BENCH_TENSORFLOW_REQUIREMENT="tensorflow[and-cuda]" for GPUs
        "requires": [os.environ.get("BENCH_TENSORFLOW_REQUIREMENT", "tensorflow-cpu==2.21.0")],
    },
    "keras": {
        "python": None,
        # Keras on TensorFlow reuses bench_tensorflow's runtime set-up and weight conversions
        "package": "packages/keras",
        "depends": ["packages/tensorflow"],
        "requires": [os.environ.get("BENCH_TENSORFLOW_REQUIREMENT", "tensorflow-cpu==2.21.0")],
    },
}


@nox.session
def lint(session):
    session.install("ruff")
    session.run("ruff", "check", ".")


@nox.session
def core(session):
    """The orchestrator and the runtime, with the numpy stand-in framework: no framework.
    With the Slurm extra: a test sweeps with hydra/launcher=submitit_local."""
    session.install("-e", "shared", "-e", "packages/bench[slurm]", "pytest")
    session.run("pytest", "--rootdir", ".", "shared/tests", "packages/bench/tests",
                *session.posargs)


def framework_session(name, spec):
    @nox.session(name=name, python=spec["python"])
    def run(session):
        session.install(*spec["requires"])
        local = [*spec.get("depends", []), spec["package"]]  # editable, beside the runtime
        session.install(*RUNTIME, *(arg for path in local for arg in ("-e", path)), "pytest")
        session.run("pytest", "--rootdir", ".", "shared/tests", f"{spec['package']}/tests",
                    *session.posargs)

    run.__doc__ = f"The {name} package in its own environment: install and test."
    return run


for _name, _spec in FRAMEWORKS.items():
    globals()[_name] = framework_session(_name, _spec)


# CNTK 2.7 (2019, its last release) has wheels for CPython <= 3.6 only: its environment is built
# from a Python 3.6 found on the machine, with the last pip for 3.6 and the pins CNTK needs.
# Its two sessions are outside the framework table: `cntk` builds the 3.6 environment and runs
# the worker-side tests there (the runtime's own tests included: shared/ proves itself on 3.6);
# `cntk_e2e` runs `python -m bench framework=cntk` from the orchestrator's interpreter, which
# discovers .nox/cntk.
CNTK_REQUIRES = ["numpy==1.19.5", "scipy==1.5.4", "cntk==2.7.post2"]


def find_python36():
    """python3.6 on PATH, else pyenv's 3.6 versions; None when the machine has none."""
    candidates = [shutil.which("python3.6")]
    if shutil.which("pyenv"):
        root = subprocess.run(["pyenv", "root"], capture_output=True, text=True).stdout.strip()
        candidates += sorted(glob.glob(os.path.join(root, "versions", "3.6*", "bin", "python3.6")),
                             reverse=True)
    for candidate in filter(None, candidates):
        out = subprocess.run([candidate, "--version"], capture_output=True, text=True)
        if out.returncode == 0 and (out.stdout + out.stderr).startswith("Python 3.6"):
            return candidate
    return None


PYTHON36 = find_python36()
NO_PYTHON36 = ("CNTK 2.7 needs Python 3.6 and none was found (python3.6 on PATH or a 3.6 in "
               "pyenv, e.g. `pyenv install 3.6.15`)")


@nox.session(python=PYTHON36 or False, venv_backend="venv")
def cntk(session):
    """CNTK 2.7 in a Python 3.6 environment: install, make the MPI shim, run the worker-side
    tests (packages/cntk/tests and the runtime's shared/tests) under Python 3.6."""
    if PYTHON36 is None:
        session.skip(NO_PYTHON36)
    session.install("pip==21.3.1")  # the last pip for Python 3.6
    session.install(*CNTK_REQUIRES)
    session.install("-e", "shared", "-e", "packages/cntk", "pytest<7.1")
    # CNTK links OpenMPI 1.10's sonames: symlinks to OpenMPI 4's inside this environment
    # (part of the install step: `nox -s cntk --install-only` makes them too)
    session.run_install("python", "-W", "ignore::UserWarning", "-m", "bench_cntk.mpi_shim")
    # where the orchestrator looks too: "{prefix}/lib/bench-mpi-shim" in conf/framework/cntk.yaml
    shim = os.path.join(session.virtualenv.location, "lib", "bench-mpi-shim")
    library_path = os.pathsep.join(filter(None, [shim, os.environ.get("LD_LIBRARY_PATH")]))
    session.run("pytest", "--rootdir", ".", "-W", "ignore::DeprecationWarning",
                "shared/tests", "packages/cntk/tests", *session.posargs,
                env={"LD_LIBRARY_PATH": library_path})


@nox.session
def cntk_e2e(session):
    """`python -m bench framework=cntk ...` from this interpreter, discovering .nox/cntk."""
    if PYTHON36 is None:
        session.skip(NO_PYTHON36)
    session.install(*RUNTIME, "pytest")
    session.run("pytest", "--rootdir", ".", "packages/cntk/tests_e2e", *session.posargs)
