"""One nox session per framework, each in its own virtual environment, so that conflicting
pins never meet. `nox -s <framework>` builds the environment that `python -m bench
framework=<framework>` then finds in .nox/<framework>; `--install-only` builds it without
running the tests.

    nox                           # the whole test suite (what .ci/run runs)
    nox -s torch --install-only   # just build the PyTorch environment
    nox -s tensorflow_extended    # the tests too slow for every commit (see `extended`)
"""
import glob
import os
import shutil
import subprocess

import nox

nox.options.download_python = "never"  # interpreters come from the machine (PATH, pyenv)
RUNTIME = ["-e", "shared", "-e", "packages/bench"]
SHARED_E2E = "packages/bench/tests_frameworks"  # every framework's smoke runs, from `bench`
CONFORMANCE = "shared/tests/test_conformance.py"  # every framework's maths, in-process
# each pytest run lists its slowest tests: where CI's minutes go (its budget is 45)
SLOWEST = ["--durations=8"]
KERAS = "keras==3.15.1"  # the Keras that tensorflow-cpu==2.21.0 brings, on every backend
# Keras 2.3.1, the last multi-backend Keras (2.4 on need TensorFlow), with its dependencies
# pinned as pip resolves them: keras_cntk's on Python 3.6 (pip 21.3.1; h5py's cached-property
# too), keras_theano's on Python 3.11
KERAS2_PY36 = ["keras==2.3.1", "keras-applications==1.0.8", "keras-preprocessing==1.1.2",
               "h5py==3.1.0", "cached-property==1.5.2", "pyyaml==6.0.1", "six==1.17.0"]
KERAS2_PY311 = ["keras==2.3.1", "keras-applications==1.0.8", "keras-preprocessing==1.1.2",
                "h5py==3.16.0", "pyyaml==6.0.4", "six==1.17.0"]


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
# conf/framework/<fw>.yaml); its session, its place in the default run and its tests follow.
#   frameworks  the conf/framework/ names this environment serves: the shared conformance
#               suite (shared/tests/test_conformance.py) runs for them here, and the shared
#               end-to-end suite (packages/bench/tests_frameworks) from the orchestrator
#   e2e_also    worker-only environments whose end-to-end runs this session drives too
#   python      an interpreter (None: the one running nox); needs_python: skip, saying why,
#               where none is found
#   requires    installed first, so that pip keeps those pins (build_requires: installed before
#               them, for sdists built without isolation); pip: a pinned pip for old Pythons
#   worker_only the interpreter cannot run the orchestrator (Python < 3.9): only the
#               worker-side tests run there; e2e names tests run from a session `<name>_e2e`
#               in the orchestrator's interpreter, which discovers this environment
#   install_step  a command run in the environment after installing (part of --install-only)
#   runtime_tests  also run the runtime's NumPy-only tests (shared/tests) here: once per
#               NumPy/Python the workers use (core has the newest)
#   test_env    environment of the tests; "{venv}" is the environment's directory
#   also_tests  test folders run by a second pytest in the same environment (a package it
#               depends on, whose test files share names with its own)
#   extended    a pytest -k expression of tests too slow for every commit: left out of the
#               session, run by `nox -s <name>_extended` (not in the default run)
FRAMEWORKS = {
    "torch": {
        "frameworks": ["torch"],
        "python": None,  # the interpreter running nox
        "package": "packages/torch",
        # the CPU build: a plain `torch` from PyPI is a multi-GB CUDA build on Linux;
        # BENCH_TORCH_REQUIREMENT=torch picks whatever pip finds (e.g. your CUDA index)
        "requires": [os.environ.get("BENCH_TORCH_REQUIREMENT", "torch==2.13.0")],
    },
    "tensorflow": {
        # TensorFlow's own API (bench_tensorflow) and Keras 3 on TensorFlow (bench_keras, the
        # same package as keras_jax and keras_torch): one environment, as the pins are one
        # (the Keras that tensorflow-cpu brings); KERAS_BACKEND=tensorflow for the in-process
        # tests (conf/framework/keras.yaml's `env` for workers). bench_keras reuses
        # bench_tensorflow's runtime set-up; bench_tensorflow reuses Keras' layer layouts
        "frameworks": ["tensorflow", "keras"],
        "python": None,
        "package": "packages/tensorflow",
        "depends": ["packages/keras"],
        # the CPU build here; BENCH_TENSORFLOW_REQUIREMENT="tensorflow[and-cuda]" for GPUs
        "requires": [os.environ.get("BENCH_TENSORFLOW_REQUIREMENT", "tensorflow-cpu==2.21.0"),
                     KERAS],
        "also_tests": ["packages/keras/tests"],  # its own pytest run (same test file names)
        "test_env": {"KERAS_BACKEND": "tensorflow"},
        # DenseNet-121's training graph takes 40-80 s to trace and optimise per first step:
        # its training-step checks and Keras' one-device smoke run (4 minutes) run in
        # `nox -s tensorflow_extended`, not in every commit's run
        "extended": "densenet and (training_steps or smoke_run_learns_and_reports)",
    },
    # Keras 3 on its other backends: the same package (bench_keras), one environment per
    # backend, so that each backend's pins stand alone and a Keras-on-JAX or -torch worker
    # proves it needs no TensorFlow; KERAS_BACKEND (conf/framework/keras*.yaml's `env` for
    # workers, test_env for the in-process conformance suite) picks the backend
    "keras_jax": {
        "frameworks": ["keras_jax"],
        "python": None,
        "package": "packages/keras",
        # jax's CPU wheels; BENCH_JAX_REQUIREMENT="jax[cuda12]==0.10.2" for GPUs
        "requires": [KERAS, os.environ.get("BENCH_JAX_REQUIREMENT", "jax==0.10.2"),
                     "jaxlib==0.10.2"],
        "test_env": {"KERAS_BACKEND": "jax"},
        # as flax's: XLA's CPU compile of DenseNet-121's training step takes minutes here
        "extended": "densenet and (training_steps or two_processes)",
    },
    "keras_torch": {
        "frameworks": ["keras_torch"],
        "python": None,
        "package": "packages/keras",
        "requires": [KERAS, os.environ.get("BENCH_TORCH_REQUIREMENT", "torch==2.13.0")],
        "test_env": {"KERAS_BACKEND": "torch"},
    },
    "flax": {
        "frameworks": ["flax"],
        "python": None,
        # JAX's CPU wheels (jaxlib); BENCH_JAX_REQUIREMENT="jax[cuda12]==0.10.2" for GPUs
        "package": "packages/flax",
        "requires": [os.environ.get("BENCH_JAX_REQUIREMENT", "jax[cpu]==0.10.2"),
                     "jaxlib==0.10.2", "flax==0.12.8", "optax==0.2.8"],
        # XLA's CPU compile of DenseNet-121's training step takes minutes here (200 s for the
        # first step on a loaded 2-core machine): its training-step check against the NumPy
        # reference and the two-device run are in `nox -s flax_extended`, not every commit's
        "extended": "densenet and (training_steps or two_processes)",
    },
    "mxnet": {
        "frameworks": ["gluon", "mxnet"],
        "python": None,
        # one package, two framework configs (gluon, mxnet); MXNet 1.9.1 is the last release
        # and breaks on numpy >= 1.24. BENCH_MXNET_REQUIREMENT=mxnet-cu112==1.9.1 for GPUs
        "package": "packages/mxnet",
        "requires": ["numpy==1.23.5", os.environ.get("BENCH_MXNET_REQUIREMENT", "mxnet==1.9.1")],
        "runtime_tests": True,  # numpy 1.23
    },
    "chainer_ideep": {
        # iDeep (Intel's MKL-DNN backend for Chainer) has wheels for Python <= 3.7 only: a
        # worker-only environment: the shared suite runs in it, the chainer session's tests
        # run its workers end to end (framework=chainer_ideep)
        "frameworks": ["chainer_ideep"],
        "python": find_python("3.7"),
        "needs_python": ("3.7", "ideep4py"),  # skipped, saying why, where no 3.7 exists
        "package": "packages/chainer",
        "build_requires": ["setuptools<70", "wheel"],
        "requires": ["numpy==1.21.6", "setuptools<70", "chainer==7.8.1", "ideep4py==2.0.0.post3"],
        "worker_only": True,
        "test_requires": ["pytest", "pyyaml"],
        "venv_backend": "venv",  # virtualenv no longer seeds Python 3.7 environments
    },
    "chainer": {
        "frameworks": ["chainer"],
        "e2e_also": ["chainer_ideep"],  # its Python 3.7 workers, built before this session
        "python": None,
        "package": "packages/chainer",
        # Chainer 7.8.1 is an sdist whose setup.py imports pkg_resources (gone in setuptools
        # >= 70): it is built in this environment with build_requires, not in an isolated
        # build (whose setuptools pip >= 25.3 no longer constrains), so any pip works (the
        # README's plain install does the same); `import chainer` needs numpy.distutils.
        "build_requires": ["setuptools<70", "wheel"],
        # mpi4py: ChainerMN's MPI transport for the data-parallel DenseNet (devices=N under
        # mpiexec); its wheel loads the MPI library (Open MPI: libopenmpi3) at run time
        "requires": ["numpy==1.23.5", "setuptools<70", "chainer==7.8.1", "mpi4py==4.1.2"],
    },
    "paddle": {
        "frameworks": ["paddle"],
        "python": None,
        # the CPU wheel (Linux x86-64, CPython 3.9-3.13); paddlepaddle's own numpy floor is
        # >= 1.21: pinned here with the numpy it was tested with.
        # BENCH_PADDLE_REQUIREMENT=paddlepaddle-gpu==3.3.1 (from Paddle's CUDA index) for GPUs
        "package": "packages/paddle",
        "requires": ["numpy==2.4.6",
                     os.environ.get("BENCH_PADDLE_REQUIREMENT", "paddlepaddle==3.3.1")],
    },
    "cntk": {
        # CNTK 2.7 (2019, its last release) has wheels for CPython <= 3.6 only: built from a
        # Python 3.6 found on the machine, with the last pip for 3.6; the runtime's own tests
        # run there too (shared/ proves itself on 3.6); cntk_e2e runs `python -m bench
        # framework=cntk` from the orchestrator's interpreter. Keras 2.3.1 on CNTK
        # (framework=keras_cntk, packages/keras2) shares the environment and its pins;
        # KERAS_BACKEND=cntk for the in-process tests (its YAML's `env` for workers)
        "frameworks": ["cntk", "keras_cntk"],
        "python": find_python("3.6"),
        "needs_python": ("3.6", "CNTK 2.7"),
        "venv_backend": "venv",
        "pip": "pip==21.3.1",
        "package": "packages/cntk",
        "depends": ["packages/keras2"],
        "requires": ["numpy==1.19.5", "scipy==1.5.4", "cntk==2.7.post2", *KERAS2_PY36],
        "runtime_tests": True,  # Python 3.6, numpy 1.19: the oldest a worker runs
        "test_requires": ["pytest<7.1", "pyyaml<6.1"],
        "worker_only": True,
        "e2e": "packages/cntk/tests_e2e",
        # CNTK links OpenMPI 1.10's sonames: symlinks to OpenMPI 4's inside the environment,
        # where conf/framework/cntk.yaml's library_path ("{prefix}/lib/bench-mpi-shim") looks
        "install_step": ["python", "-W", "ignore::UserWarning", "-m", "bench_cntk.mpi_shim"],
        "test_env": {"LD_LIBRARY_PATH": "{venv}/lib/bench-mpi-shim", "KERAS_BACKEND": "cntk"},
        "also_tests": ["packages/keras2/tests"],  # Keras 2's own, on CNTK
        "pytest_args": ["-W", "ignore::DeprecationWarning"],  # CNTK's inspect.getargspec
    },
    "theano": {
        # Theano 1.0.5 (2020, its last release) and Lasagne 0.1 (2015, PyPI's only release):
        # Python 3.11 (3.12 removed distutils and imp, which Theano imports, and numpy 1.23 has
        # no 3.12 wheels), numpy 1.23 (Theano uses numpy.distutils and aliases removed in 1.24)
        # and scipy's OpenBLAS for Theano's BLAS
        # (bench_lasagne/theano_runtime.py: the shims). One environment for every Theano
        # front end (lasagne; Keras 2 on Theano joins it), as the pins are one. Both are
        # sdists whose setup.py needs setuptools (pkg_resources) at build time.
        # Keras 2.3.1 on Theano (framework=keras_theano, packages/keras2) shares it, with
        # bench_lasagne's runtime set-up; KERAS_BACKEND=theano for the in-process tests (its
        # YAML's `env` for workers)
        "frameworks": ["lasagne", "keras_theano"],
        "python": find_python("3.11"),
        "needs_python": ("3.11", "Theano 1.0.5"),
        "package": "packages/lasagne",
        "depends": ["packages/keras2"],
        "build_requires": ["setuptools<70", "wheel"],
        "requires": ["numpy==1.23.5", "scipy==1.10.1", "Theano==1.0.5", "lasagne==0.1",
                     *KERAS2_PY311],
        "test_env": {"KERAS_BACKEND": "theano"},
        "also_tests": ["packages/keras2/tests"],  # Keras 2's own, on Theano
        # every CI session starts with a cold compile cache: g++ and Theano's graph
        # optimiser take minutes per training graph (the GRU's most). Keras 2's GRU and
        # ResNet-50 files are checked on CNTK in `nox -s cntk`; on Theano they run in
        # `nox -s theano_extended`, and keras_theano's CNN (Theano's flipped kernels) here.
        # Lasagne's GRU is checked here by the conformance suite (in-process); its smoke run
        # through a worker (which re-optimises the training graph, ~1.5 min) is extended
        "extended": "keras_theano and (rnn or resnet50) or smoke_run and lasagne and rnn",
    },
    "onnxruntime": {
        # an inference runtime: resnet50 only; the graph is built from the neutral weights
        # with onnx's helpers (no other framework). The CPU wheel here; for CUDA
        # BENCH_ONNXRUNTIME_REQUIREMENT=onnxruntime-gpu==<version> (a separate distribution)
        "frameworks": ["onnxruntime"],
        "python": None,
        "package": "packages/onnxruntime",
        "requires": [os.environ.get("BENCH_ONNXRUNTIME_REQUIREMENT", "onnxruntime==1.32.0"),
                     "onnx==1.23.2", "numpy==2.4.6"],
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
    pytest(session, "shared/tests", "packages/bench/tests", *session.posargs)


def pytest(session, *args, **kwargs):
    session.run("pytest", "--rootdir", ".", *SLOWEST, *args, **kwargs)


def _editable(paths):
    return [arg for path in paths for arg in ("-e", path)]


def framework_session(name, spec, extended=False):
    needs = spec.get("needs_python")
    missing = needs is not None and spec["python"] is None

    # the extended session builds the same environment in .nox/<name>_extended
    @nox.session(name=f"{name}_extended" if extended else name,
                 python=False if missing else spec["python"],
                 venv_backend=spec.get("venv_backend"))
    def run(session):
        if missing:
            session.skip(missing_python(*needs))
        if spec.get("pip"):
            session.install(spec["pip"])
        if spec.get("build_requires"):  # sdists built here, with these, not in isolation
            session.install(*spec["build_requires"])
            session.install("--no-build-isolation", *spec["requires"])
        else:
            session.install(*spec["requires"])
        local = [*spec.get("depends", []), spec["package"]]  # editable, beside the runtime
        runtime = ["-e", "shared"] if spec.get("worker_only") else RUNTIME
        session.install(*runtime, *_editable(local), *spec.get("test_requires", ["pytest"]))
        if spec.get("install_step"):
            session.run_install(*spec["install_step"])
        env = {key: value.replace("{venv}", session.virtualenv.location)
               for key, value in spec.get("test_env", {}).items()}
        if "LD_LIBRARY_PATH" in env and os.environ.get("LD_LIBRARY_PATH"):
            env["LD_LIBRARY_PATH"] += os.pathsep + os.environ["LD_LIBRARY_PATH"]
        env["BENCH_TEST_FRAMEWORKS"] = ",".join(spec["frameworks"])  # conformance, in-process
        env["BENCH_E2E_FRAMEWORKS"] = ",".join(e2e_frameworks(spec))  # workers, from `bench`
        if extended:  # only the slow tests (`nox -s <name>_extended`)
            pytest(session, *spec.get("pytest_args", []), *tests(spec), "-k", spec["extended"],
                   *session.posargs, env=env)
            return
        selection = ["-k", f"not ({spec['extended']})"] if spec.get("extended") else []
        pytest(session, *spec.get("pytest_args", []), *tests(spec), *selection,
               *session.posargs, env=env)
        for folder in spec.get("also_tests", []):
            pytest(session, *spec.get("pytest_args", []), folder, *session.posargs, env=env)

    run.__doc__ = (f"The {name} package's slow tests (not in the default run)." if extended
                   else f"The {name} package in its own environment: install and test.")
    return run


def tests(spec):
    """The shared conformance suite, the shared end-to-end suite, then the package's tests; a
    worker-only variant of a package that another session tests runs the conformance suite
    only. The runtime's own NumPy-only tests (the rest of shared/tests) run in `core` and in
    the sessions marked runtime_tests, one per NumPy/Python the workers use, not in all."""
    tested_elsewhere = any(other["package"] == spec["package"] and not other.get("worker_only")
                           for other in FRAMEWORKS.values())
    if spec.get("worker_only") and tested_elsewhere:
        return [CONFORMANCE]
    package_tests = f"{spec['package']}/tests"
    shared = ["shared/tests"] if spec.get("runtime_tests") else [CONFORMANCE]
    if not spec.get("worker_only"):
        shared.append(SHARED_E2E)
    return shared + ([package_tests] if os.path.isdir(package_tests) else [])


def e2e_frameworks(spec):
    """The frameworks whose workers a session's end-to-end tests run: its own, and those of
    `e2e_also` environments that this machine can build."""
    also = [name for name in spec.get("e2e_also", [])
            if FRAMEWORKS[name]["python"] is not None or not FRAMEWORKS[name].get("needs_python")]
    return spec["frameworks"] + also


def e2e_session(name, spec):
    @nox.session(name=f"{name}_e2e")
    def run(session):
        if spec.get("needs_python") and spec["python"] is None:
            session.skip(missing_python(*spec["needs_python"]))
        session.install(*RUNTIME, "pytest")
        pytest(session, SHARED_E2E, spec["e2e"], *session.posargs,
               env={"BENCH_E2E_FRAMEWORKS": ",".join(spec["frameworks"])})

    run.__doc__ = (f"`python -m bench` from this interpreter with the {name} environment's "
                   f"workers (it discovers .nox/{name}).")
    return run


# The rows written in R (packages/r): framework -> the environment (FRAMEWORKS) whose Python
# its R worker drives through reticulate; built by that environment's session, before `r`.
R_ROWS = {"r_mxnet": "mxnet", "r_keras": "keras_jax"}
R_PROBE = "for (p in commandArgs(TRUE)) if (!requireNamespace(p, quietly = TRUE)) quit(status = 3)"


def missing_r():
    """Why the R rows cannot run here (no Rscript, no reticulate), or None."""
    fix = ("`apt-get install --no-install-recommends r-base-core r-cran-reticulate` (Debian, "
           "as .ci/run does)")
    if shutil.which("Rscript") is None:
        return f"Rscript is not on PATH: {fix}; session skipped"
    if subprocess.run(["Rscript", "-e", R_PROBE, "reticulate"], capture_output=True).returncode:
        return f"R's reticulate package is not installed: {fix}; session skipped"
    return None


@nox.session
def r(session):
    """The rows written in R (framework=r_mxnet, r_keras): the shared end-to-end suite through
    the R worker, from this interpreter, in the environments of the frameworks they drive
    (.nox/mxnet, .nox/keras_jax: built by their sessions first), and packages/r's tests."""
    why = missing_r()
    if why:
        session.skip(why)
    session.install(*RUNTIME, "pytest")
    pytest(session, SHARED_E2E, "packages/r/tests", *session.posargs,
           env={"BENCH_E2E_FRAMEWORKS": ",".join(R_ROWS)})


for _name, _spec in FRAMEWORKS.items():
    globals()[_name] = framework_session(_name, _spec)
    if _spec.get("extended"):
        globals()[f"{_name}_extended"] = framework_session(_name, _spec, extended=True)
    if _spec.get("e2e"):
        globals()[f"{_name}_e2e"] = e2e_session(_name, _spec)

# the default run (`nox`, what .ci/run runs): lint, core, then every framework's sessions
nox.options.sessions = ["lint", "core"] + [
    session for name, spec in FRAMEWORKS.items()
    for session in [name] + ([f"{name}_e2e"] if spec.get("e2e") else [])] + ["r"]
