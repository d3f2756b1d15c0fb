"""One nox session per framework, each in its own virtual environment, so that conflicting
pins never meet. `nox -s <framework>` builds the environment that `python -m bench
framework=<framework>` then finds in .nox/<framework>; `--install-only` builds it without
running the tests.

    nox                           # the whole test suite (what .ci/run runs)
    nox -s torch --install-only   # just build the PyTorch environment
"""
import os
import subprocess

import nox

nox.options.download_python = "never"  # interpreters come from the machine (PATH, pyenv)
nox.options.sessions = ["lint", "core", "torch", "tensorflow", "keras", "chainer_ideep", "chainer"]

RUNTIME = ["-e", "shared", "-e", "packages/bench"]


def pyenv_python(version):
    """An interpreter that pyenv installed but did not put on PATH (nox looks on PATH only)."""
    try:
        prefix = subprocess.run(["pyenv", "prefix", version], capture_output=True, text=True,
                                check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return version  # nox reports it missing
    return os.path.join(prefix, "bin", "python")


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
    "chainer": {
        "python": None,
        "package": "packages/chainer",
        # Chainer 7.8.1 is an sdist whose setup.py imports pkg_resources: its isolated build
        # needs setuptools<70, which the build constraint gives it (the README's plain install
        # uses the same file); `import chainer` needs numpy.distutils, i.e. numpy 1.23.
        "requires": ["numpy==1.23.5", "setuptools<70", "chainer==7.8.1"],
        "pip_env": {"PIP_CONSTRAINT": "packages/chainer/build-constraints.txt"},
    },
    "chainer_ideep": {
        # iDeep (Intel's MKL-DNN backend for Chainer) has wheels for Python <= 3.7 only: a
        # worker-only environment, tested from the chainer session (framework=chainer_ideep)
        "python": pyenv_python("3.7"),
        "package": "packages/chainer",
        "requires": ["numpy==1.21.6", "setuptools<70", "chainer==7.8.1", "ideep4py==2.0.0.post3"],
        "pip_env": {"PIP_CONSTRAINT": "packages/chainer/build-constraints.txt"},
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
    With the Slurm extra: a test sweeps with hydra/launcher=submitit_local."""
    session.install("-e", "shared", "-e", "packages/bench[slurm]", "pytest")
    session.run("pytest", "--rootdir", ".", "shared/tests", "packages/bench/tests",
                *session.posargs)


def framework_session(name, spec):
    @nox.session(name=name, python=spec["python"], venv_backend=spec.get("venv_backend"))
    def run(session):
        env = spec.get("pip_env")
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
