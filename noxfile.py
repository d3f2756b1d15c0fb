"""One nox session per framework environment, each its own virtual environment, so that
conflicting pins never meet. `nox -s <env>` builds the environment that `python -m bench
framework=<name>` then finds in .nox/<env>; `--install-only` builds it without the tests.

    nox                           # the whole test suite (what .ci/run runs)
    nox -s torch --install-only   # just build the PyTorch environment
    nox -s tensorflow_extended    # the tests too slow for every commit (`slow_tests`)
    nox -s slurm                  # a one-host Slurm cluster, driven through the CLI
    nox -s lock -- torch          # resolve locks/torch.txt again, after changing its pins

Every session installs from its lock, locks/<session>.txt: the whole dependency set of its
environment, pinned with hashes (`install`, `lock`). Why each environment is pinned the way it
is: the package's README (packages/<dir>/README.md).
"""

import dataclasses
import hashlib
import importlib.util
import json
import os
import re
import shlex
import ssl
import subprocess
import sys
import tempfile
from collections import namedtuple
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

import nox

nox.options.download_python = "never"  # interpreters come from the machine (PATH, pyenv)
# uv where nox finds it (`pip install nox uv`), else pip; `nox -db virtualenv` builds with pip
nox.options.default_venv_backend = "uv|virtualenv"
# uv installs without compiling to bytecode (pip compiles): where Python may not write it
# (PYTHONDONTWRITEBYTECODE, a read-only environment) every process, every worker among them,
# would compile each module it imports again, 0.4 s of every orchestrator's start and seconds
# of a framework's import
os.environ.setdefault("UV_COMPILE_BYTECODE", "1")
ROOT = Path(__file__).resolve().parent
# what rows need beyond their environment, how it is found and installed: the orchestrator's
# own module, loaded by path (standard library only: nox's environment lacks bench's packages)
_spec = importlib.util.spec_from_file_location(
    "bench_system", ROOT / "packages/bench/bench/run/system.py"
)
system = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(system)
# Behind a proxy that intercepts TLS (a corporate or university network) pip works where uv
# does not: pip trusts the system's certificates and reads its configuration's `cert` and
# index, uv trusts only its own bundled roots and reads no pip configuration. So uv is given the
# certificates and the index pip would use (uv_settings, below, where the user set neither for
# uv), is asked once whether it reaches the index (uv_reaches), and a session falls back to
# pip, saying so in one line, where it does not.
UV_TLS_VARIABLES = ("SSL_CERT_FILE", "SSL_CERT_DIR", "UV_NATIVE_TLS", "UV_SYSTEM_CERTS")
UV_INDEX_VARIABLES = ("UV_DEFAULT_INDEX", "UV_INDEX_URL")


def pip_settings(environ=None, listing=None):
    """What pip would use to reach its index: {cert, index-url, extra-index-url, find-links}
    from its configuration files (`pip config list`, or `listing`: its output) and its PIP_*
    variables, which win."""
    environ = os.environ if environ is None else environ
    if listing is None:
        try:
            listing = subprocess.run(
                [sys.executable, "-m", "pip", "config", "list"],
                capture_output=True,
                text=True,
                timeout=60,
            ).stdout
        except (OSError, subprocess.SubprocessError):
            listing = ""
    found = {}
    for line in listing.splitlines():
        key, sep, value = line.partition("=")
        if sep and not key.startswith(":env:"):
            found[key.rsplit(".", 1)[-1]] = value.strip().strip("'\"")
    for name in ("cert", "index-url", "extra-index-url", "find-links"):
        variable = "PIP_" + name.upper().replace("-", "_")
        if environ.get(variable):
            found[name] = environ[variable]
    return {
        k: v
        for k, v in found.items()
        if k in ("cert", "index-url", "extra-index-url", "find-links")
    }


def system_certificates():
    """The system's CA bundle, the one pip and OpenSSL trust (None where there is none)."""
    paths = ssl.get_default_verify_paths()
    for path in (paths.cafile, paths.openssl_cafile):
        if path and os.path.isfile(path):
            return path
    return None


def uv_settings(environ, pip):
    """({variable: value} that let uv reach the index pip reaches, [one line for each part of
    pip's configuration uv is not given]): the certificates (pip's `cert`, else the system's)
    and pip's index-url, where the user set none of uv's own; extra indexes and find-links are
    said, not passed (a machine's local wheel directory must not change what a lock installs)."""
    found, notes = {}, []
    if not any(environ.get(v) for v in UV_TLS_VARIABLES):
        cert = pip.get("cert") if os.path.isfile(pip.get("cert") or "") else system_certificates()
        if cert:
            found["SSL_CERT_FILE"] = cert
    if pip.get("index-url") and not any(environ.get(v) for v in UV_INDEX_VARIABLES):
        found["UV_DEFAULT_INDEX"] = pip["index-url"]
    for name, variable in (("extra-index-url", "UV_INDEX"), ("find-links", "UV_FIND_LINKS")):
        if pip.get(name) and not environ.get(variable):
            notes.append(
                f"pip's {name} ({pip[name]}) is not passed to uv, which reads no pip "
                f"configuration: {variable}=... passes it"
            )
    return found, notes


def uv_reaches(uv, python, requirement, environ=None):
    """(whether uv reaches the index for `requirement` ("name==version"), why not: the last
    line uv said): a dry run that resolves it from the index, installs nothing."""
    done = subprocess.run(
        [uv, "pip", "install", "--dry-run", "--no-deps", "--python", python, requirement],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ if environ is None else environ),
    )
    if done.returncode == 0:
        return True, None
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    telling = [line for line in lines if "certificate" in line or line.startswith("error")]
    return False, ((telling or lines)[-1] if lines else f"uv exited with status {done.returncode}")


_UV_SET, _UV_NOTES = uv_settings(os.environ, pip_settings())
for _variable, _value in _UV_SET.items():
    os.environ.setdefault(_variable, _value)

RUNTIME = ("shared", "packages/bench")  # the orchestrator and the runtime, editable
SHARED_E2E = "packages/bench/tests_frameworks"  # every framework's smoke runs, from `bench`
CONFORMANCE = "shared/tests/test_conformance.py"  # every framework's maths, in-process
SLOWEST = ("--durations=8",)  # where CI's minutes go
KERAS = "keras==3.15.1"  # the Keras that tensorflow-cpu==2.21.0 brings, on every backend
# Keras 2.3.1 (the last multi-backend Keras) and its dependencies as pip resolves them on
# Python 3.6 (keras_cntk) and 3.11 (keras_theano)
KERAS2 = ("keras==2.3.1", "keras-applications==1.0.8", "keras-preprocessing==1.1.2", "six==1.17.0")
KERAS2_PY36 = (*KERAS2, "h5py==3.1.0", "cached-property==1.5.2", "pyyaml==6.0.1")
KERAS2_PY311 = (*KERAS2, "h5py==3.16.0", "pyyaml==6.0.4")
TORCH = "torch==2.13.0"  # PyPI's torch: the CUDA build (README: Set up, for a CPU-only one)
TORCHAO = "torchao==0.18.0"  # PyTorch's PT2E quantization (precision=int8) lives there

# The locks: `nox -s lock` resolves each against PyPI alone, as it stood at LOCK_DATE (so that
# resolving again gives the same bytes; move the date to take newer releases), for Linux on
# x86-64 and the environment's Python, with the uv below (the locks are in its format).
LOCKS = ROOT / "locks"
LOCK_DATE = "2026-12-05T00:00:00Z"
LOCK_INDEX = "https://pypi.org/simple"
LOCK_PLATFORM = "x86_64-manylinux_2_28"  # glibc >= 2.28, which torch's wheels need
LOCK_PYTHON = "3.11"  # unless the environment declares another (conf/framework/*.yaml)
UV = "uv==0.13.9"
MARKER = "bench-environment.json"  # in each environment: which lock built it (`mark`)


@dataclasses.dataclass(frozen=True)
class Env:
    """One environment and its session. A key that is not a field here is an error."""

    package: str  # packages/<dir> whose tests run here
    requires: tuple  # the pins it asks for; its lock holds these and all they need
    depends: tuple = ()  # other project packages it needs, installed editable beside it
    # installed first; then the sdists among `requires` build with them, in the environment
    build_requires: tuple = ()
    pip: Optional[str] = None  # a pinned pip (old Pythons), installed before anything else
    venv_backend: Optional[str] = None  # None: nox.options.default_venv_backend
    # (variable, the locked package its value replaces): a user's own build, e.g. CUDA's
    overrides: tuple = ()
    worker_only: bool = False  # cannot run the orchestrator (Python < 3.9): workers' tests only
    runtime_tests: bool = False  # also the runtime's NumPy-only tests (one per NumPy/Python)
    test_requires: tuple = ("pytest",)
    test_env: tuple = ()  # (variable, value) for the tests; "{venv}": the environment's path
    also_tests: tuple = ()  # folders run by a second pytest here (test file names may clash)
    pytest_args: tuple = ()
    e2e: Optional[str] = None  # worker-only: these tests run from `<env>_e2e`, our interpreter
    e2e_also: tuple = ()  # worker-only environments whose end-to-end runs this session drives
    install_step: tuple = ()  # run in the environment after installing (--install-only too)


ENVIRONMENTS = {
    "torch": Env(
        package="packages/torch",
        requires=(TORCH, TORCHAO),
        overrides=(("BENCH_TORCH_REQUIREMENT", "torch"),),
    ),
    "tensorflow": Env(  # framework=tensorflow and Keras 3 on TensorFlow: one set of pins
        package="packages/tensorflow",
        depends=("packages/keras_layers", "packages/keras"),
        requires=("tensorflow-cpu==2.21.0", KERAS),
        overrides=(("BENCH_TENSORFLOW_REQUIREMENT", "tensorflow-cpu"),),
        also_tests=("packages/keras/tests", "packages/keras_layers/tests"),
        test_env=(("KERAS_BACKEND", "tensorflow"),),
    ),
    "keras_jax": Env(
        package="packages/keras",
        depends=("packages/keras_layers",),
        requires=(KERAS, "jax==0.10.2", "jaxlib==0.10.2"),
        overrides=(("BENCH_JAX_REQUIREMENT", "jax"),),
        test_env=(("KERAS_BACKEND", "jax"),),
    ),
    "keras_torch": Env(
        package="packages/keras",
        depends=("packages/keras_layers",),
        requires=(KERAS, TORCH),
        overrides=(("BENCH_TORCH_REQUIREMENT", "torch"),),
        test_env=(("KERAS_BACKEND", "torch"),),
    ),
    "flax": Env(
        package="packages/flax",
        requires=("jax[cpu]==0.10.2", "jaxlib==0.10.2", "flax==0.12.8", "optax==0.2.8"),
        overrides=(("BENCH_JAX_REQUIREMENT", "jax"),),
    ),
    "mxnet": Env(
        package="packages/mxnet",
        runtime_tests=True,
        requires=("numpy==1.23.5", "mxnet==1.9.1"),
        overrides=(("BENCH_MXNET_REQUIREMENT", "mxnet"),),
    ),
    "chainer_ideep": Env(  # iDeep's wheels: Python <= 3.7; its tests run from `chainer`
        package="packages/chainer",
        venv_backend="uv|venv",  # virtualenv: Python >= 3.9
        build_requires=("setuptools<70", "wheel"),
        worker_only=True,
        requires=("numpy==1.21.6", "setuptools<70", "chainer==7.8.1", "ideep4py==2.0.0.post3"),
        test_requires=("pytest", "pyyaml"),
    ),
    "chainer": Env(
        package="packages/chainer",
        e2e_also=("chainer_ideep",),
        build_requires=("setuptools<70", "wheel"),
        requires=("numpy==1.23.5", "setuptools<70", "chainer==7.8.1", "mpi4py==4.1.2"),
    ),
    "paddle": Env(
        package="packages/paddle",
        # setuptools: `import paddle` imports it (paddle.utils.cpp_extension) without
        # declaring it, and a uv-made environment has none
        requires=("numpy==2.4.6", "paddlepaddle==3.3.1", "setuptools==80.9.0"),
        overrides=(("BENCH_PADDLE_REQUIREMENT", "paddlepaddle"),),
    ),
    "cntk": Env(  # CNTK 2.7 and Keras 2 on CNTK: CPython 3.6 only
        # pip: uv installs nothing editable on 3.6 (no setuptools for 3.6 has PEP 660)
        package="packages/cntk",
        depends=("packages/keras2",),
        venv_backend="venv",
        pip="pip==21.3.1",
        worker_only=True,
        runtime_tests=True,
        e2e="packages/cntk/tests_e2e",
        requires=("numpy==1.19.5", "scipy==1.5.4", "cntk==2.7.post2", *KERAS2_PY36),
        test_requires=("pytest<7.1", "pyyaml<6.1"),
        install_step=("python", "-W", "ignore::UserWarning", "-m", "bench_cntk.mpi_shim"),
        test_env=(("LD_LIBRARY_PATH", "{venv}/lib/bench-mpi-shim"), ("KERAS_BACKEND", "cntk")),
        also_tests=("packages/keras2/tests",),
        pytest_args=("-W", "ignore::DeprecationWarning"),
    ),
    "theano": Env(  # Lasagne and Keras 2 on Theano 1.0.5: CPython <= 3.11, numpy < 1.24
        package="packages/lasagne",
        depends=("packages/theano", "packages/keras2"),
        build_requires=("setuptools<70", "wheel"),
        requires=("numpy==1.23.5", "scipy==1.10.1", "Theano==1.0.5", "lasagne==0.1", *KERAS2_PY311),
        test_env=(("KERAS_BACKEND", "theano"),),
        also_tests=("packages/theano/tests", "packages/keras2/tests"),
    ),
    "onnxruntime": Env(
        package="packages/onnxruntime",
        requires=("onnxruntime==1.32.0", "onnx==1.23.2", "numpy==2.4.6"),
        overrides=(("BENCH_ONNXRUNTIME_REQUIREMENT", "onnxruntime"),),
    ),
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
            value = dict(
                tuple(part.strip() for part in item.split(":", 1))
                for item in value.strip("{} ").split(",")
                if item.strip()
            )
        found[path.stem] = value
    return found


R_ROWS = set(declared("r_models"))  # rows written in R: their session is `r`
R_ENVIRONMENTS = {declared("nox_session")[fw] for fw in R_ROWS}  # the environments they drive
SYSTEM = declared("system")  # framework -> {dependency: "always" or "devices"}
# frameworks that declare tests too slow for every commit (`slow_tests`, which the shared suites
# mark `slow`): their environment's `<env>_extended` session runs those, the default one not
SLOW = {
    path.stem
    for path in (ROOT / "conf" / "framework").glob("*.yaml")
    if re.search(r"^slow_tests:", path.read_text(), re.M)
}
FRAMEWORKS = {
    env: [
        fw for fw, session in declared("nox_session").items() if session == env and fw not in R_ROWS
    ]
    for env in ENVIRONMENTS
}
unknown = sorted(set(declared("nox_session").values()) - set(ENVIRONMENTS))
if unknown:
    raise ValueError(f"conf/framework/*.yaml names nox sessions with no Env here: {unknown}")


def needs(name, scope="always"):
    """The system dependencies every framework of environment `name` declares for `scope`."""
    return sorted(
        {
            dep
            for fw in FRAMEWORKS[name]
            for dep, when in SYSTEM.get(fw, {}).items()
            if when == scope
        }
    )


def declared_python(name):
    """The Python version environment `name`'s frameworks declare (conf/framework), or None."""
    versions = [dep[len("python") :] for dep in needs(name) if dep.startswith("python")]
    return versions[0] if versions else None


def interpreter(name):
    """(the interpreter environment `name` is built with, None: nox's own; why it cannot be
    built here, or None)."""
    missing = [system.missing(dep) for dep in needs(name)]
    why_not = "; ".join(filter(None, missing))
    if why_not:
        return None, f"framework={', '.join(FRAMEWORKS[name])}: {why_not}; session skipped"
    version = declared_python(name)
    return (system.python_of_version(version) if version else None), None


# What CPython 3.6 runs: the runtime, the CNTK and Keras 2 workers, the fake framework's
PYTHON36_CODE = (
    "shared/bench_shared",
    "packages/cntk",
    "packages/keras2",
    "packages/bench/tests/fake_framework",
    "benchmarks/own_loops/keras2_loop.py",
    "benchmarks/own_loops/common.py",
)

# The sessions that are not a framework's: (requirements, project folders installed editable).
# The `_e2e` sessions and `r` install core's lock: the orchestrator's.
TOOLS = {
    "lint": (("ruff==0.17.6",), ()),  # pinned: a new ruff's rules must not fail CI on its day
    "core": (("pytest", "nox", "uv"), ("shared", "packages/bench[slurm,test]")),
    "slurm": (("pytest",), ("shared", "packages/bench[slurm]")),
}


def projects(env):
    """The project folders an environment installs editable."""
    return ("shared", *(() if env.worker_only else ("packages/bench",)), *env.depends, env.package)


def lock_input(name):
    """(Python, requirements, project folders) of lock `name`: what its session asks for by
    name (the defaults, never a user's override) and, through the project packages it
    installs, their dependencies. The projects themselves are not in the lock."""
    if name in TOOLS:
        return (LOCK_PYTHON, *TOOLS[name])
    env = ENVIRONMENTS[name]
    requires = (
        ((env.pip,) if env.pip else ()) + env.build_requires + env.requires + env.test_requires
    )
    return declared_python(name) or LOCK_PYTHON, requires, projects(env)


def canonical(requirement):
    """The distribution a requirement names, normalised as PyPI does ("PyYAML<6" -> pyyaml)."""
    return re.sub(r"[-_.]+", "-", re.match(r"\s*([\w.-]+)", requirement).group(1)).lower()


def distribution(folder):
    """The distribution name of a project folder (its pyproject.toml's, else setup.cfg's)."""
    for file in ("pyproject.toml", "setup.cfg"):
        path = ROOT / folder.split("[")[0] / file
        found = path.is_file() and re.search(r'^name\s*=\s*"?([\w.-]+)', path.read_text(), re.M)
        if found:
            return found.group(1)
    raise ValueError(f"{folder}: no project name in pyproject.toml or setup.cfg")


Pin = namedtuple("Pin", "version needed_by text")


def read_lock(path):
    """{distribution: Pin(version, what needs it, its lines)} of a lock, from uv's format:
    `name==version \\`, its `--hash=` lines, then `# via` lines naming what needs it, where
    `-r noxfile` is the session asking for it by name."""
    pins, name = {}, None
    for line in Path(path).read_text().splitlines(keepends=True):
        entry = re.match(r"([A-Za-z0-9][\w.-]*)(?:\[[^\]]*\])?==([^\s;\\]+)", line)
        if entry:
            name = canonical(entry.group(1))
            pins[name] = Pin(entry.group(2), [], [line])
        elif name and line.startswith(" "):  # a hash or a `# via` line of the entry above
            pins[name].text.append(line)
            via = re.sub(r"^#\s*(via\b)?", "", line.strip()).strip() if "#" in line else ""
            if via:
                pins[name].needed_by.append(via if via.startswith("-r") else canonical(via))
        else:
            name = None  # a header, a blank line or the footer
    return pins


def left_out(pins, package):
    """`package` and what, by the lock's `# via`, only it needs, transitively: what a user's
    replacement of `package` leaves out of the lock's install (torch's CUDA libraries beside a
    CPU-only torch). What the session or a project package asks for stays."""
    out = {package}
    grew = True
    while grew:
        grew = False
        for name, pin in pins.items():
            if name not in out and pin.needed_by and set(pin.needed_by) <= out:
                out.add(name)
                grew = True
    return out


def install(session, lock, folders=(), env=None):
    """Build the session's environment from locks/<lock>.txt: every package of the lock at
    its pin, each file checked against the lock's hashes, nothing resolved beyond it; then the
    project folders editable, without dependencies (the lock holds theirs); then the marker
    (`mark`). Returns without installing where nox installs nothing (--no-install on a reused
    environment).

    An Env's `pip` and `build_requires` go first, from the lock too; with build_requires, what
    the session asks for goes last, built in the environment (--no-build-isolation: the sdists
    of Chainer and Theano need an older setuptools), and the rest of the lock builds as usual.
    A user's override (Env.overrides, e.g. BENCH_TORCH_REQUIREMENT="torch==2.13.0+cpu
    --index-url https://download.pytorch.org/whl/cpu") is shlex-split and installed after the
    lock, resolved by the installer with its dependencies; the locked package it replaces, and
    what only that package needs, are left out of the lock's install; both are said in the log
    and recorded in the marker."""
    python = session.run_install(
        "python", "-c", "import platform; print(platform.python_version())", silent=True
    )
    if python is None:
        return
    python = python.strip().splitlines()[-1]
    marker = Path(session.virtualenv.location) / MARKER
    marker.unlink(missing_ok=True)  # a failed build leaves none
    path = LOCKS / f"{lock}.txt"
    if not path.is_file():
        session.error(f"no lock {path.relative_to(ROOT)}: `nox -s lock -- {lock}` makes it")
    installer, installed_with = choose_installer(session, path)
    locked_for = lock_input(lock)[0]
    if not python.startswith(f"{locked_for}."):
        session.warn(f"Python {python} installs locks/{lock}.txt, resolved for {locked_for}")
    pins = read_lock(path)
    overrides = [
        (variable, package, os.environ[variable])
        for variable, package in (env.overrides if env else ())
        if os.environ.get(variable)
    ]
    skipped = {variable: sorted(left_out(pins, package)) for variable, package, _ in overrides}
    checked = ("--require-hashes", "--no-deps")
    with tempfile.TemporaryDirectory() as tmp:

        def part(file, names):
            (Path(tmp) / file).write_text("".join(line for n in names for line in pins[n].text))
            return str(Path(tmp) / file)

        # pip before what it installs; then what the sdists built in place build with
        firsts = [(env.pip,) if env.pip else (), env.build_requires] if env else []
        for first in filter(None, firsts):
            installer(*checked, "-r", part("first.txt", map(canonical, first)))
        leave = {n for names in skipped.values() for n in names}
        last = {canonical(r) for r in env.requires} - leave if env and env.build_requires else set()
        rest = [n for n in pins if n not in leave | last]
        installer(
            *checked,
            "-r",
            part("lock.txt", rest) if len(rest) < len(pins) else str(path.relative_to(ROOT)),
        )
        if last:
            installer(*checked, "--no-build-isolation", "-r", part("last.txt", sorted(last)))
    for variable, _, value in overrides:
        session.warn(
            f"override {variable}={value!r}, left out of locks/{lock}.txt: "
            f"{', '.join(skipped[variable])}"
        )
        installer(*shlex.split(value))
    if folders:
        installer("--no-deps", *editable(folders))
        # the project's own modules compiled once too (an editable install compiles nothing,
        # and with PYTHONDONTWRITEBYTECODE every process would compile them again)
        # (a test folder that an older Python cannot compile stays uncompiled: not an error)
        session.run_install(
            "python",
            "-m",
            "compileall",
            "-q",
            *(f.split("[")[0] for f in folders),
            silent=True,
            success_codes=[0, 1],
        )
    if env and env.install_step:
        session.run_install(*env.install_step)
    mark(
        session,
        path,
        python,
        installed_with,
        [
            {"variable": variable, "value": value, "left_out": skipped[variable]}
            for variable, _, value in overrides
        ],
    )


def choose_installer(session, lock):
    """How this session installs: (a function taking what `pip install` takes, "uv" or "pip"
    for the marker): nox's own
    (uv, or pip in a virtualenv or venv environment), or, where uv cannot reach the index
    (uv_reaches on the lock's first pin), pip bootstrapped into the uv-made environment, which
    reads pip's configuration and the system's certificates: said in one line each."""
    if session.venv_backend != "uv":
        return session.install, "pip"
    for note in _UV_NOTES:
        session.log(note)
    pins = read_lock(lock) if Path(lock).is_file() else {}
    if not pins:
        return session.install, "uv"
    name, pin = next(iter(pins.items()))
    found, uv = nox.virtualenv.find_uv()[:2]
    reached, why = uv_reaches(
        uv if found else "uv", session.virtualenv.location, f"{name}=={pin.version}"
    )
    if reached:
        return session.install, "uv"
    session.warn(
        f"uv cannot reach the package index ({why}): installing with pip, which reads pip's "
        f"configuration and the system's certificates; to let uv through, give it your "
        f"network's CA bundle (SSL_CERT_FILE, or UV_SYSTEM_CERTS=true) and index "
        f"(UV_DEFAULT_INDEX), or build with pip throughout: nox -db virtualenv"
    )
    session.run_install("python", "-m", "ensurepip", "--upgrade", silent=True)

    def with_pip(*args, **kwargs):
        session.run_install("python", "-m", "pip", "install", *args, **kwargs)

    return with_pip, "pip"


def mark(session, lock, python, installer, overrides):
    """Write <environment>/bench-environment.json, which says how it was built:

    - environment: the session's name (`torch`, `cntk_e2e`, ...)
    - lock: the lock it was built from, relative to the repository (`locks/torch.txt`)
    - lock_sha256: that file's SHA-256 when it was built (another: the lock changed since)
    - python: the environment's Python version (`3.11.7`)
    - installer: `uv` or `pip`
    - overrides: [{variable, value, left_out}]: each user's replacement installed on top of
      the lock, and the locked packages it left out ([] when built from the lock alone)
    - built: when, UTC, ISO 8601 (`2026-12-06T05:00:00Z`)
    """
    record = {
        "environment": session.name,
        "lock": str(lock.relative_to(ROOT)),
        "lock_sha256": hashlib.sha256(lock.read_bytes()).hexdigest(),
        "python": python,
        "installer": installer,
        "overrides": overrides,
        "built": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    marker = Path(session.virtualenv.location) / MARKER
    marker.write_text(json.dumps(record, indent=2) + "\n")


@nox.session(default=False)
def lock(session):
    """Resolve every lock again (locks/<session>.txt), or those named: `nox -s lock -- torch`.
    Each is what its session asks for by name (Env.requires and the rest, TOOLS) and what the
    project packages it installs need, for its Python, from PyPI alone as it stood at
    LOCK_DATE, whatever this machine's pip or uv configuration says: the same inputs give the
    same bytes."""
    names = session.posargs or [*ENVIRONMENTS, *TOOLS]
    unknown = sorted(set(names) - set(ENVIRONMENTS) - set(TOOLS))
    if unknown:
        session.error(f"no environment {unknown}: one of {', '.join([*ENVIRONMENTS, *TOOLS])}")
    session.install(UV)
    LOCKS.mkdir(exist_ok=True)
    clean = {variable: None for variable in os.environ if variable.startswith("UV_")}
    for name in names:
        python, requires, folders = lock_input(name)
        env = ENVIRONMENTS.get(name)
        with tempfile.TemporaryDirectory() as tmp:
            # the input's name is what the lock's `# via -r noxfile` says
            Path(tmp, "noxfile").write_text(
                "".join(f"{line}\n" for line in [*requires, *(f"-e {ROOT / f}" for f in folders)])
            )
            build = ()
            if env and env.build_requires:  # sdists whose metadata build needs these
                Path(tmp, "build.txt").write_text("\n".join(env.build_requires) + "\n")
                build = ("--build-constraints", "build.txt")
            with session.chdir(tmp):
                session.run(
                    "uv",
                    "pip",
                    "compile",
                    "noxfile",
                    "--output-file",
                    "lock.txt",
                    "--no-config",
                    "--index-url",
                    LOCK_INDEX,
                    "--exclude-newer",
                    LOCK_DATE,
                    "--python-version",
                    python,
                    "--python-platform",
                    LOCK_PLATFORM,
                    "--generate-hashes",
                    "--quiet",
                    *build,
                    *(f"--no-emit-package={distribution(f)}" for f in folders),
                    "--custom-compile-command",
                    f"nox -s lock -- {name}",
                    env=clean,
                )
            text = Path(tmp, "lock.txt").read_text()
        target = LOCKS / f"{name}.txt"
        state = (
            "unchanged"
            if target.is_file() and target.read_text() == text
            else "updated"
            if target.is_file()
            else "written"
        )
        target.write_text(text)
        session.log(f"locks/{name}.txt: {state}")


@nox.session
def lint(session):
    """ruff's rules and its formatter; the code Python 3.6 runs, compiled by a 3.6 where one is
    found (the formatter knows no target older than 3.7)."""
    install(session, "lint")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    python36 = system.python_of_version("3.6")
    if python36 is None:
        session.log("no CPython 3.6 here: the Python 3.6 code is not compiled by 3.6")
        return
    session.run(python36, "-m", "compileall", "-q", "-x", r"(^|/)\.", *PYTHON36_CODE, external=True)


@nox.session
def core(session):
    """The orchestrator and the runtime, with the numpy stand-in framework: no framework.
    With the Slurm extra: a test sweeps with hydra/launcher=submitit_local; with the test
    extra (selenium), the HTML page is tested in Chromium where it is installed; with nox, the
    sessions' skips where a system package is missing."""
    install(session, "core", TOOLS["core"][1])
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
        session.skip(
            "the one-host Slurm cluster starts its own slurmd and munged: root only; "
            "session skipped"
        )
    install(session, "slurm", TOOLS["slurm"][1])
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
    tested_elsewhere = any(
        other.package == env.package and not other.worker_only for other in ENVIRONMENTS.values()
    )
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
    also = [fw for other in env.e2e_also if not interpreter(other)[1] for fw in FRAMEWORKS[other]]
    return FRAMEWORKS[name] + also


def framework_session(name, env, extended=False):
    python, why_not = interpreter(name)

    # the extended session builds the same environment in .nox/<name>_extended
    @nox.session(
        name=f"{name}_extended" if extended else name,
        python=False if why_not else python,
        venv_backend=env.venv_backend,
    )
    def run(session):
        if why_not:
            session.skip(why_not)
        install(session, name, projects(env), env)
        variables = {
            key: value.replace("{venv}", session.virtualenv.location) for key, value in env.test_env
        }
        if "LD_LIBRARY_PATH" in variables and os.environ.get("LD_LIBRARY_PATH"):
            variables["LD_LIBRARY_PATH"] += os.pathsep + os.environ["LD_LIBRARY_PATH"]
        variables["BENCH_TEST_FRAMEWORKS"] = ",".join(FRAMEWORKS[name])  # in-process
        variables["BENCH_E2E_FRAMEWORKS"] = ",".join(e2e_frameworks(name, env))  # workers
        if extended:
            pytest(
                session,
                *env.pytest_args,
                *tests(name, env),
                "-m",
                "slow",
                *session.posargs,
                env=variables,
            )
            return
        pytest(
            session,
            *env.pytest_args,
            *tests(name, env),
            "-m",
            "not slow",
            *session.posargs,
            env=variables,
        )
        for folder in env.also_tests:
            pytest(session, *env.pytest_args, folder, *session.posargs, env=variables)

    rows = ", ".join(FRAMEWORKS[name])
    run.__doc__ = (
        f"framework={rows}: the slow tests (not in the default run)."
        if extended
        else f"framework={rows}: build the environment and test."
    )
    return run


def e2e_session(name, env):
    @nox.session(name=f"{name}_e2e")
    def run(session):
        why_not = interpreter(name)[1]
        if why_not:
            session.skip(why_not)
        install(session, "core", RUNTIME)
        pytest(
            session,
            SHARED_E2E,
            env.e2e,
            "-m",
            "not slow",
            *session.posargs,
            env={"BENCH_E2E_FRAMEWORKS": ",".join(FRAMEWORKS[name])},
        )

    run.__doc__ = (
        f"`python -m bench` from this interpreter with the {name} environment's "
        f"workers (it discovers .nox/{name})."
    )
    return run


@nox.session
def r(session):
    """The rows written in R (conf/framework/*.yaml with r_models): the shared end-to-end suite
    through the R worker, from this interpreter, in the environments of the frameworks they
    drive (built by their sessions first), and packages/r's tests."""
    why = system.missing("r")
    if why:
        session.skip(f"framework={', '.join(sorted(R_ROWS))}: {why}; session skipped")
    install(session, "core", RUNTIME)
    pytest(
        session,
        SHARED_E2E,
        "packages/r/tests",
        "-m",
        "not slow",
        *session.posargs,
        env={"BENCH_E2E_FRAMEWORKS": ",".join(sorted(R_ROWS))},
    )


for _name, _env in ENVIRONMENTS.items():
    globals()[_name] = framework_session(_name, _env)
    if any(fw in SLOW for fw in FRAMEWORKS[_name]):
        globals()[f"{_name}_extended"] = framework_session(_name, _env, extended=True)
    if _env.e2e:
        globals()[f"{_name}_e2e"] = e2e_session(_name, _env)

# the default run (`nox`, what .ci/run runs): lint, core, slurm, then every environment's
nox.options.sessions = (
    ["lint", "core", "slurm"]
    + [
        session
        for name, env in ENVIRONMENTS.items()
        for session in [name] + ([f"{name}_e2e"] if env.e2e else [])
    ]
    + ["r"]
)
