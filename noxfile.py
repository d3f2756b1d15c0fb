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
nox.options.sessions = ["lint", "core", "torch", "tensorflow", "keras", "mxnet", "chainer_ideep",
                        "chainer", "cntk", "cntk_e2e"]

RUNTIME = ["-e", "shared", "-e", "packages/bench"]


def find_python(version):
    """python<version> on PATH, else the newest of pyenv's <version>.x; None when the machine
    has neither (nox itself looks on PATH only, and cannot download interpreters here)."""
    candidates = [shutil.which(f"python{version}")]
    if shutil.which("pyenv"):
        root = subprocess.run(["pyenv", "root"], capture_output=True, text=True).stdout.strip()
        candidates += sorted(glob.glob(os.path.join(root, "versions", f"{version}.*", "bin",
                                                    f"python{version}")), reverse=True)
    for candidate in filter(None, candidates):
        out = subprocess.run([candidate, "--version"], capture_output=True, text=True)
        if out.returncode == 0 and (out.stdout + out.stderr).startswith(f"Python {version}."):
            return candidate
    return None


def missing_python(version, why):
    return (f"{why} needs Python {version} and none was found (python{version} on PATH or a "
            f"{version} in pyenv, e.g. `pyenv install {version}`): session skipped")


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
    "mxnet": {
        "python": None,
        # one package, two framework configs (gluon, mxnet); MXNet 1.9.1 is the last release
        # and breaks on numpy >= 1.24. BENCH_MXNET_REQUIREMENT=mxnet-cu112==1.9.1 for GPUs
        "package": "packages/mxnet",
        "requires": ["numpy==1.23.5", os.environ.get("BENCH_MXNET_REQUIREMENT", "mxnet==1.9.1")],
    },
    "chainer": {
        "python": None,
        "package": "packages/chainer",
        # Chainer 7.8.1 is an sdist whose setup.py imports pkg_resources (gone in setuptools
        # >= 70): it is built in this environment with build_requires, not in an isolated
        # build (whose setuptools pip >= 25.3 no longer constrains), so any pip works (the
        # README's plain install does the same); `import chainer` needs numpy.distutils.
        "build_requires": ["setuptools<70", "wheel"],
        "requires": ["numpy==1.23.5", "setuptools<70", "chainer==7.8.1"],
    },
    "chainer_ideep": {
        # iDeep (Intel's MKL-DNN backend for Chainer) has wheels for Python <= 3.7 only: a
        # worker-only environment, tested from the chainer session (framework=chainer_ideep)
        "python": find_python("3.7"),
        "needs_python": ("3.7", "ideep4py"),  # skipped, saying why, where no 3.7 exists
        "package": "packages/chainer",
        "build_requires": ["setuptools<70", "wheel"],
        "requires": ["numpy==1.21.6", "setuptools<70", "chainer==7.8.1", "ideep4py==2.0.0.post3"],
        "worker_only": "import bench_chainer, ideep4py",
        "venv_backend": "venv",  # virtualenv no longer seeds Python 3.7 environments
    },
}


@nox.session
def lint(session):
    session.install("ruff")
    session.run("ruff", "check", ".")


@nox.session
def core(session):
    """The orchestrator and the runtime, with the numpy stand-in framework: no framework.
    With the Slurm extra: a test sweeps with hydra/launcher=submitit_local; with the test
    extra (selenium), the HTML page is tested in Chromium where it is installed."""
    session.install("-e", "shared", "-e", "packages/bench[slurm,test]", "pytest")
    session.run("pytest", "--rootdir", ".", "shared/tests", "packages/bench/tests",
                *session.posargs)


def framework_session(name, spec):
    needs = spec.get("needs_python")
    missing = needs is not None and spec["python"] is None

    @nox.session(name=name, python=False if missing else spec["python"],
                 venv_backend=spec.get("venv_backend"))
    def run(session):
        if missing:
            session.skip(missing_python(*needs))
        env = spec.get("pip_env")
        if spec.get("build_requires"):  # sdists built here, with these, not in isolation
            session.install(*spec["build_requires"], env=env)
            session.install("--no-build-isolation", *spec["requires"], env=env)
        else:
            session.install(*spec["requires"], env=env)
        local = [*spec.get("depends", []), spec["package"]]  # editable, beside the runtime
        if spec.get("worker_only"):  # an interpreter the orchestrator (Python >= 3.9) cannot use
            session.install("-e", "shared", *(arg for path in local for arg in ("-e", path)),
                            env=env)
            session.run("python", "-c", spec["worker_only"])
            return
        session.install(*RUNTIME, *(arg for path in local for arg in ("-e", path)), "pytest",
                        env=env)
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


PYTHON36 = find_python("3.6")


@nox.session(python=PYTHON36 or False, venv_backend="venv")
def cntk(session):
    """CNTK 2.7 in a Python 3.6 environment: install, make the MPI shim, run the worker-side
    tests (packages/cntk/tests and the runtime's shared/tests) under Python 3.6."""
    if PYTHON36 is None:
        session.skip(missing_python("3.6", "CNTK 2.7"))
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
        session.skip(missing_python("3.6", "CNTK 2.7"))
    session.install(*RUNTIME, "pytest")
    session.run("pytest", "--rootdir", ".", "packages/cntk/tests_e2e", *session.posargs)
