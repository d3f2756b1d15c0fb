"""One nox session per framework, each in its own virtual environment, so that conflicting
pins never meet. `nox -s <framework>` builds the environment that `python -m bench
framework=<framework>` then finds in .nox/<framework>; `--install-only` builds it without
running the tests.

    nox                           # the whole test suite (what .ci/run runs)
    nox -s torch --install-only   # just build the PyTorch environment
"""
import os

import nox

nox.options.download_python = "never"  # interpreters come from the machine (PATH, pyenv)
nox.options.sessions = ["lint", "core", "torch", "tensorflow", "keras", "mxnet"]

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
    "mxnet": {
        "python": None,
        # one package, two framework configs (gluon, mxnet); MXNet 1.9.1 is the last release
        # and breaks on numpy >= 1.24. BENCH_MXNET_REQUIREMENT=mxnet-cu112==1.9.1 for GPUs
        "package": "packages/mxnet",
        "requires": ["numpy==1.23.5", os.environ.get("BENCH_MXNET_REQUIREMENT", "mxnet==1.9.1")],
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
