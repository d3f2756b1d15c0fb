"""One nox session per framework environment, each its own virtual environment, so that
conflicting pins never meet. `nox -s <env>` builds the environment that `python -m bench
framework=<name>` then finds in .nox/<env>; `--install-only` builds it without the tests.

    nox                           # the whole test suite (what .ci/run runs)
    nox -s torch --install-only   # just build the PyTorch environment
    nox -s tensorflow_extended    # the tests too slow for every commit (see `extended`)
    nox -s slurm                  # a one-host Slurm cluster, driven through the CLI

Why each environment is pinned the way it is: the package's README (packages/<dir>/README.md).
"""
import dataclasses
import importlib.util
import os
import re
from pathlib import Path
from typing import Optional

import nox

nox.options.download_python = "never"  # interpreters come from the machine (PATH, pyenv)
ROOT = Path(__file__).resolve().parent
# what rows need beyond their environment, how it is found and installed: the orchestrator's
# own module, loaded by path (standard library only: nox's environment lacks bench's packages)
_spec = importlib.util.spec_from_file_location("bench_system",
                                               ROOT / "packages/bench/bench/run/system.py")
system = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(system)
RUNTIME = ("-e", "shared", "-e", "packages/bench")
SHARED_E2E = "packages/bench/tests_frameworks"  # every framework's smoke runs, from `bench`
CONFORMANCE = "shared/tests/test_conformance.py"  # every framework's maths, in-process
SLOWEST = ("--durations=8",)  # where CI's minutes go
KERAS = "keras==3.15.1"  # the Keras that tensorflow-cpu==2.21.0 brings, on every backend
# Keras 2.3.1 (the last multi-backend Keras) and its dependencies as pip resolves them on
# Python 3.6 (keras_cntk) and 3.11 (keras_theano)
KERAS2 = ("keras==2.3.1", "keras-applications==1.0.8", "keras-preprocessing==1.1.2",
          "six==1.17.0")
KERAS2_PY36 = (*KERAS2, "h5py==3.1.0", "cached-property==1.5.2", "pyyaml==6.0.1")
KERAS2_PY311 = (*KERAS2, "h5py==3.16.0", "pyyaml==6.0.4")


def requirement(variable, default):
    """A pin a user may replace, e.g. BENCH_TORCH_REQUIREMENT=torch for a CUDA build (the
    defaults are the CPU builds: a plain `torch` from PyPI is a multi-GB CUDA build)."""
    return os.environ.get(variable, default)


@dataclasses.dataclass(frozen=True)
class Env:
    """One environment and its session. A key that is not a field here is an error."""

    package: str  # packages/<dir> whose tests run here
    requires: tuple  # installed first, so that pip keeps these pins
    depends: tuple = ()  # other project packages it needs, installed editable beside it
    build_requires: tuple = ()  # installed before `requires`, whose sdists build without isolation
    pip: Optional[str] = None  # a pinned pip (old Pythons)
    venv_backend: Optional[str] = None
    worker_only: bool = False  # cannot run the orchestrator (Python < 3.9): workers' tests only
    runtime_tests: bool = False  # also the runtime's NumPy-only tests (one per NumPy/Python)
    test_requires: tuple = ("pytest",)
    test_env: tuple = ()  # (variable, value) for the tests; "{venv}": the environment's path
    also_tests: tuple = ()  # folders run by a second pytest here (test file names may clash)
    pytest_args: tuple = ()
    extended: Optional[str] = None  # -k of tests too slow for every commit: `<env>_extended`
    e2e: Optional[str] = None  # worker-only: these tests run from `<env>_e2e`, our interpreter
    e2e_also: tuple = ()  # worker-only environments whose end-to-end runs this session drives
    install_step: tuple = ()  # run in the environment after installing (--install-only too)


ENVIRONMENTS = {
    "torch": Env(
        package="packages/torch",
        requires=(requirement("BENCH_TORCH_REQUIREMENT", "torch==2.13.0"),)),
    "tensorflow": Env(  # framework=tensorflow and Keras 3 on TensorFlow: one set of pins
        package="packages/tensorflow", depends=("packages/keras_layers", "packages/keras"),
        requires=(requirement("BENCH_TENSORFLOW_REQUIREMENT", "tensorflow-cpu==2.21.0"), KERAS),
        also_tests=("packages/keras/tests", "packages/keras_layers/tests"),
        test_env=(("KERAS_BACKEND", "tensorflow"),),
        extended="densenet and (training_steps or smoke_run_learns_and_reports or "
                 "two_processes and tensorflow)"),
    "keras_jax": Env(
        package="packages/keras", depends=("packages/keras_layers",),
        requires=(KERAS, requirement("BENCH_JAX_REQUIREMENT", "jax==0.10.2"), "jaxlib==0.10.2"),
        test_env=(("KERAS_BACKEND", "jax"),),
        extended="densenet and (training_steps or two_processes)"),
    "keras_torch": Env(
        package="packages/keras", depends=("packages/keras_layers",),
        requires=(KERAS, requirement("BENCH_TORCH_REQUIREMENT", "torch==2.13.0")),
        test_env=(("KERAS_BACKEND", "torch"),)),
    "flax": Env(
        package="packages/flax",
        requires=(requirement("BENCH_JAX_REQUIREMENT", "jax[cpu]==0.10.2"), "jaxlib==0.10.2",
                  "flax==0.12.8", "optax==0.2.8"),
        extended="densenet and (training_steps or two_processes)"),
    "mxnet": Env(
        package="packages/mxnet", runtime_tests=True,
        requires=("numpy==1.23.5", requirement("BENCH_MXNET_REQUIREMENT", "mxnet==1.9.1"))),
    "chainer_ideep": Env(  # iDeep's wheels: Python <= 3.7; its tests run from `chainer`
        package="packages/chainer", venv_backend="venv",
        build_requires=("setuptools<70", "wheel"), worker_only=True,
        requires=("numpy==1.21.6", "setuptools<70", "chainer==7.8.1", "ideep4py==2.0.0.post3"),
        test_requires=("pytest", "pyyaml")),
    "chainer": Env(
        package="packages/chainer", e2e_also=("chainer_ideep",),
        build_requires=("setuptools<70", "wheel"),
        requires=("numpy==1.23.5", "setuptools<70", "chainer==7.8.1", "mpi4py==4.1.2")),
    "paddle": Env(
        package="packages/paddle",
        requires=("numpy==2.4.6", requirement("BENCH_PADDLE_REQUIREMENT", "paddlepaddle==3.3.1"))),
    "cntk": Env(  # CNTK 2.7 and Keras 2 on CNTK: CPython 3.6 only
        package="packages/cntk", depends=("packages/keras2",), venv_backend="venv",
        pip="pip==21.3.1", worker_only=True,
        runtime_tests=True, e2e="packages/cntk/tests_e2e",
        requires=("numpy==1.19.5", "scipy==1.5.4", "cntk==2.7.post2", *KERAS2_PY36),
        test_requires=("pytest<7.1", "pyyaml<6.1"),
        install_step=("python", "-W", "ignore::UserWarning", "-m", "bench_cntk.mpi_shim"),
        test_env=(("LD_LIBRARY_PATH", "{venv}/lib/bench-mpi-shim"), ("KERAS_BACKEND", "cntk")),
        also_tests=("packages/keras2/tests",), pytest_args=("-W", "ignore::DeprecationWarning")),
    "theano": Env(  # Lasagne and Keras 2 on Theano 1.0.5: CPython <= 3.11, numpy < 1.24
        package="packages/lasagne", depends=("packages/theano", "packages/keras2"),
        build_requires=("setuptools<70", "wheel"),
        requires=("numpy==1.23.5", "scipy==1.10.1", "Theano==1.0.5", "lasagne==0.1",
                  *KERAS2_PY311),
        test_env=(("KERAS_BACKEND", "theano"),),
        also_tests=("packages/theano/tests", "packages/keras2/tests"),
        extended="keras_theano and (rnn or resnet50) or smoke_run and lasagne and rnn"),
    "onnxruntime": Env(
        package="packages/onnxruntime",
        requires=(requirement("BENCH_ONNXRUNTIME_REQUIREMENT", "onnxruntime==1.32.0"),
                  "onnx==1.23.2", "numpy==2.4.6")),
}


def declared(key):
    """{framework: its top-level `key`} from conf/framework/*.yaml: a plain scalar, or a
    one-line flow mapping ({a: b, c: d}) as a dict (read without a YAML library, which nox's
    own environment lacks)."""
    found = {}
    for path in sorted((ROOT / "conf" / "framework").glob("*.yaml")):
        match = re.search(rf"^{key}:[ \t]*([^#\n]*)", path.read_text(), re.M)
        if not match or not match.group(1).strip():
            continue
        value = match.group(1).strip()
        if value.startswith("{"):
            value = dict(tuple(part.strip() for part in item.split(":", 1))
                         for item in value.strip("{} ").split(",") if item.strip())
        found[path.stem] = value
    return found


R_ROWS = set(declared("r_models"))  # rows written in R: their session is `r`
R_ENVIRONMENTS = {declared("nox_session")[fw] for fw in R_ROWS}  # the environments they drive
SYSTEM = declared("system")  # framework -> {dependency: "always" or "devices"}
FRAMEWORKS = {env: [fw for fw, session in declared("nox_session").items()
                    if session == env and fw not in R_ROWS] for env in ENVIRONMENTS}
unknown = sorted(set(declared("nox_session").values()) - set(ENVIRONMENTS))
if unknown:
    raise ValueError(f"conf/framework/*.yaml names nox sessions with no Env here: {unknown}")


def needs(name, scope="always"):
    """The system dependencies every framework of environment `name` declares for `scope`."""
    return sorted({dep for fw in FRAMEWORKS[name] for dep, when in SYSTEM.get(fw, {}).items()
                   if when == scope})


def interpreter(name):
    """(the interpreter environment `name` is built with, None: nox's own; why it cannot be
    built here, or None)."""
    versions = [dep[len("python"):] for dep in needs(name) if dep.startswith("python")]
    missing = [system.missing(dep) for dep in needs(name)]
    why_not = "; ".join(filter(None, missing))
    if why_not:
        return None, f"framework={', '.join(FRAMEWORKS[name])}: {why_not}; session skipped"
    return (system.find_python(versions[0]) if versions else None), None


@nox.session
def lint(session):
    # Pinned: a new ruff release adds rules, and CI must not fail on a release day.
    session.install("ruff==0.17.6")
    session.run("ruff", "check", ".")


@nox.session
def core(session):
    """The orchestrator and the runtime, with the numpy stand-in framework: no framework.
    With the Slurm extra: a test sweeps with hydra/launcher=submitit_local; with the test
    extra (selenium), the HTML page is tested in Chromium where it is installed; with nox, the
    sessions' skips where a system package is missing."""
    session.install("-e", "shared", "-e", "packages/bench[slurm,test]", "pytest", "nox")
    pytest(session, "shared/tests", "packages/bench/tests", *session.posargs)


@nox.session
def slurm(session):
    """A real Slurm on this host: the tests' fixture starts munged, slurmctld and two slurmd
    (node names node1, node2) from a private slurm.conf, and the tests drive the command line
    with the numpy stand-in framework through it — a submitit sweep and its resumption, runs
    across nodes through submitit and srun, a time limit, a cancelled job, a reused run
    directory, a plain command in an allocation of two tasks (packages/bench/tests_slurm).
    Needs Debian's slurm-wlm and munge, and root (the daemons run as root)."""
    why = system.missing("slurm")
    if why:
        session.skip(f"{why}; session skipped")
    if os.geteuid() != 0:
        session.skip("the one-host Slurm cluster starts its own slurmd and munged: root only; "
                     "session skipped")
    session.install("-e", "shared", "-e", "packages/bench[slurm]", "pytest")
    pytest(session, "packages/bench/tests_slurm", *session.posargs)


def pytest(session, *args, **kwargs):
    session.run("pytest", "--rootdir", ".", *SLOWEST, *args, **kwargs)


def editable(paths):
    return [arg for path in paths for arg in ("-e", path)]


def tests(name, env):
    """The shared conformance suite, the shared end-to-end suite, then the package's tests; a
    worker-only variant of a package that another session tests runs the conformance suite
    only. The runtime's own NumPy-only tests (the rest of shared/tests) run in `core` and in
    the environments marked runtime_tests, one per NumPy/Python the workers use."""
    tested_elsewhere = any(other.package == env.package and not other.worker_only
                           for other in ENVIRONMENTS.values())
    if env.worker_only and tested_elsewhere:
        return [CONFORMANCE]
    shared = ["shared/tests"] if env.runtime_tests else [CONFORMANCE]
    if not env.worker_only:
        shared.append(SHARED_E2E)
    package_tests = f"{env.package}/tests"
    return shared + ([package_tests] if os.path.isdir(package_tests) else [])


def e2e_frameworks(name, env):
    """The frameworks whose workers a session's end-to-end tests run: its own, and those of
    `e2e_also` environments that this machine can build."""
    also = [fw for other in env.e2e_also if not interpreter(other)[1]
            for fw in FRAMEWORKS[other]]
    return FRAMEWORKS[name] + also


def framework_session(name, env, extended=False):
    python, why_not = interpreter(name)

    # the extended session builds the same environment in .nox/<name>_extended
    @nox.session(name=f"{name}_extended" if extended else name,
                 python=False if why_not else python, venv_backend=env.venv_backend)
    def run(session):
        if why_not:
            session.skip(why_not)
        if env.pip:
            session.install(env.pip)
        if env.build_requires:  # sdists built here, with these, not in isolation
            session.install(*env.build_requires)
            session.install("--no-build-isolation", *env.requires)
        else:
            session.install(*env.requires)
        runtime = ["-e", "shared"] if env.worker_only else list(RUNTIME)
        session.install(*runtime, *editable([*env.depends, env.package]), *env.test_requires)
        if env.install_step:
            session.run_install(*env.install_step)
        variables = {key: value.replace("{venv}", session.virtualenv.location)
                     for key, value in env.test_env}
        if "LD_LIBRARY_PATH" in variables and os.environ.get("LD_LIBRARY_PATH"):
            variables["LD_LIBRARY_PATH"] += os.pathsep + os.environ["LD_LIBRARY_PATH"]
        variables["BENCH_TEST_FRAMEWORKS"] = ",".join(FRAMEWORKS[name])  # in-process
        variables["BENCH_E2E_FRAMEWORKS"] = ",".join(e2e_frameworks(name, env))  # workers
        if extended:
            pytest(session, *env.pytest_args, *tests(name, env), "-k", env.extended,
                   *session.posargs, env=variables)
            return
        selection = ["-k", f"not ({env.extended})"] if env.extended else []
        pytest(session, *env.pytest_args, *tests(name, env), *selection, *session.posargs,
               env=variables)
        for folder in env.also_tests:
            pytest(session, *env.pytest_args, folder, *session.posargs, env=variables)

    rows = ", ".join(FRAMEWORKS[name])
    run.__doc__ = (f"framework={rows}: the slow tests (not in the default run)." if extended
                   else f"framework={rows}: build the environment and test.")
    return run


def e2e_session(name, env):
    @nox.session(name=f"{name}_e2e")
    def run(session):
        why_not = interpreter(name)[1]
        if why_not:
            session.skip(why_not)
        session.install(*RUNTIME, "pytest")
        pytest(session, SHARED_E2E, env.e2e, *session.posargs,
               env={"BENCH_E2E_FRAMEWORKS": ",".join(FRAMEWORKS[name])})

    run.__doc__ = (f"`python -m bench` from this interpreter with the {name} environment's "
                   f"workers (it discovers .nox/{name}).")
    return run


@nox.session
def r(session):
    """The rows written in R (conf/framework/*.yaml with r_models): the shared end-to-end suite
    through the R worker, from this interpreter, in the environments of the frameworks they
    drive (built by their sessions first), and packages/r's tests."""
    why = system.missing("r")
    if why:
        session.skip(f"framework={', '.join(sorted(R_ROWS))}: {why}; session skipped")
    session.install(*RUNTIME, "pytest")
    pytest(session, SHARED_E2E, "packages/r/tests", *session.posargs,
           env={"BENCH_E2E_FRAMEWORKS": ",".join(sorted(R_ROWS))})


for _name, _env in ENVIRONMENTS.items():
    globals()[_name] = framework_session(_name, _env)
    if _env.extended:
        globals()[f"{_name}_extended"] = framework_session(_name, _env, extended=True)
    if _env.e2e:
        globals()[f"{_name}_e2e"] = e2e_session(_name, _env)

# the default run (`nox`, what .ci/run runs): lint, core, slurm, then every environment's
nox.options.sessions = ["lint", "core", "slurm"] + [
    session for name, env in ENVIRONMENTS.items()
    for session in [name] + ([f"{name}_e2e"] if env.e2e else [])] + ["r"]
