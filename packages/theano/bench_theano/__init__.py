"""Theano 1.0.5's set-up on a 2020s machine, shared by every Theano front end (framework=lasagne,
bench_lasagne; framework=keras_theano, bench_keras2): call ``configure()`` before the first
``import theano``. Not a framework row itself: the runtime both rows depend on, so that Keras 2
on Theano needs no Lasagne.

Theano's last release (2020) predates Python 3.10+, numpy's ILP64 OpenBLAS wheels and the
removal of ``collections``' ABC aliases; three shims, each on its own below, make it run on
Python 3.11 with numpy 1.23.5 and scipy 1.10.1 (the `theano` nox environment's pins). Its
fixed configuration (THEANO_FLAGS, read once at import) is composed here too: float32 on the
CPU, the compile directory inside the environment, BLAS from scipy. What was applied is
``applied()``, recorded in result.json's framework settings.

Importable by Python 3.6 (worker-code rule) and imports nothing heavy: numpy, scipy and theano
are located, not imported, until ``configure()`` has finished.
"""

import collections
import collections.abc
import glob
import hashlib
import importlib.util
import os
import sys

# the flags this package needs; a user's THEANO_FLAGS wins where it sets the same key (merged,
# never silently replaced: applied() says which value came from whom)
BENCH_FLAGS = (
    ("floatX", "float32"),  # SPEC's fp32 everywhere (Theano's default floatX is float64)
    ("device", "cpu"),  # Theano's GPU back end (libgpuarray) is not installed: the CPU only
)

_state = {"applied": None}


# -- shim (a): BLAS -----------------------------------------------------------------------
# Theano links its C ops (Gemm, Dot22, CorrMM convolutions) against the library named by
# blas.ldflags. numpy >= 1.22's wheels bundle an ILP64 OpenBLAS whose symbols carry a `64_`
# suffix (dgemm_64_), which Theano's C code cannot link, so Theano would fall back to slow
# numpy-called GEMMs. scipy's wheels bundle a classic LP64 OpenBLAS (pthreads, libopenblasp):
# point Theano at that one. It is located from scipy's install (scipy.libs beside the scipy
# package, as auditwheel lays it out) without importing scipy.
def scipy_openblas():
    """(directory, -l name) of scipy's bundled LP64 OpenBLAS, or None where there is none."""
    spec = importlib.util.find_spec("scipy")
    if spec is None or not spec.submodule_search_locations:
        return None
    site = os.path.dirname(os.path.abspath(list(spec.submodule_search_locations)[0]))
    libs = sorted(glob.glob(os.path.join(site, "scipy.libs", "libopenblas*.so*")))
    lp64 = [path for path in libs if "openblas64" not in os.path.basename(path)]
    if not lp64:
        return None
    path = lp64[0]
    name = os.path.basename(path)
    if not name.endswith(".so"):  # -l<name> finds lib<name>.so only
        return None
    return os.path.dirname(path), name[len("lib") : -len(".so")]


def blas_ldflags(cache_dir):
    """blas.ldflags for scipy's OpenBLAS, linked through `cache_dir` (the base_compiledir in
    force; -L also becomes an rpath in Theano's modules)."""
    found = scipy_openblas()
    if found is None:
        raise RuntimeError(
            "Theano needs an LP64 BLAS and none was found: this package links scipy's bundled "
            "OpenBLAS (site-packages/scipy.libs/libopenblas*.so). Install scipy from its manylinux "
            "wheel (`pip install scipy==1.10.1`), or set THEANO_FLAGS=blas.ldflags=... to your "
            "own BLAS (e.g. -lopenblas)"
        )
    directory, name = found
    linked = stable_blas_dir(directory, name, cache_dir)
    return "-L%s -l%s" % (linked, name)


def stable_blas_dir(directory, name, cache_dir):
    """A directory at a fixed place in the compile cache `cache_dir` holding lib<name>.so as a
    link to this environment's scipy OpenBLAS (renewed on every call: the same file in every
    environment with these pins). Theano keys each compiled module by its link flags, -L and rpath
    included, so linking through this place rather than through the environment's own path
    lets a rebuilt or second environment with the same pins reuse the modules."""
    linked = os.path.join(cache_dir, "blas", name)
    target = os.path.join(directory, "lib%s.so" % name)
    path = os.path.join(linked, "lib%s.so" % name)
    try:
        os.makedirs(linked, exist_ok=True)
        if os.path.realpath(path) != os.path.realpath(target):
            fresh = "%s.%d" % (path, os.getpid())
            os.symlink(target, fresh)
            os.replace(fresh, path)  # atomic: another process never sees it missing
    except OSError as error:
        raise RuntimeError(
            "Theano's compile cache %s cannot hold the link to scipy's OpenBLAS (%s): make it "
            "writable, or set THEANO_FLAGS=base_compiledir=<a writable directory>"
            % (cache_dir, error)
        ) from error
    return linked


# -- shim (b): the pure-Python scan ---------------------------------------------------------
# theano.scan's inner loop has a Cython extension (scan_perform), generated for Python <= 3.8
# and compiled at first import; it does not build on Python 3.11. A None in sys.modules makes
# its import raise ImportError, on which Theano itself falls back to the pure-Python loop
# (scan_module/scan_op.py): same results, the recurrence's steps run from Python.
def use_python_scan():
    sys.modules.setdefault("theano.scan_module.scan_perform_ext", None)


# -- shim (c): collections' ABC aliases -----------------------------------------------------
# Python 3.10 removed collections.Mapping, .Sequence, .Iterable, ...; Theano 1.0.5 and Keras
# 2.3.1 still import them from `collections`. Alias each missing name to collections.abc's.
def restore_collections_aliases():
    restored = []
    for name in collections.abc.__all__:
        if not hasattr(collections, name):
            setattr(collections, name, getattr(collections.abc, name))
            restored.append(name)
    return restored


# -- THEANO_FLAGS ---------------------------------------------------------------------------
def compile_dir():
    """base_compiledir: under Theano's own default place (~/.theano), one directory per set of
    pins (Python, and the Theano, numpy and scipy installed), shared by every worker, run and
    environment with those pins: Theano caches each compiled C module there, so only the
    first run compiles them, and a rebuilt environment (a fresh checkout, `nox` without -R)
    does not compile them again (minutes of g++). Theano's default directory alone would be
    shared between environments with other pins. A base_compiledir in the user's
    THEANO_FLAGS wins (configure)."""
    return os.path.join(os.path.expanduser("~"), ".theano", "rosetta-bench-" + pins_key())


def pins_key():
    """What the compiled modules depend on besides their code: the Python version and the
    installed distributions of Theano, numpy and scipy (their dist-info names, read without
    importing them), as a short hash."""
    spec = importlib.util.find_spec("numpy")
    site = os.path.dirname(os.path.dirname(os.path.abspath(spec.origin))) if spec else ""
    names = sorted(
        os.path.basename(path)
        for pattern in ("[Tt]heano-*", "numpy-*", "scipy-*")
        for path in glob.glob(os.path.join(site, pattern + ".*-info"))
    )
    text = "%s|%s" % (sys.version.split()[0], "|".join(names))
    return "py%d.%d-%s" % (
        sys.version_info[0],
        sys.version_info[1],
        hashlib.sha1(text.encode("utf-8")).hexdigest()[:12],
    )


def parse_flags(text):
    """THEANO_FLAGS' "key=value,key=value" as an ordered list of pairs."""
    pairs = []
    for item in (text or "").split(","):
        item = item.strip()
        if item:
            key, _, value = item.partition("=")
            pairs.append((key.strip(), value.strip()))
    return pairs


def compose_flags(user, ours):
    """(THEANO_FLAGS text, {key: {"value", "from"}}): ours merged under the user's, whose value
    wins for a key both set."""
    merged = collections.OrderedDict((key, (value, "bench")) for key, value in ours)
    for key, value in parse_flags(user):
        merged[key] = (value, "user")
    text = ",".join("%s=%s" % (key, value) for key, (value, _) in merged.items())
    return text, collections.OrderedDict(
        (key, {"value": value, "from": origin}) for key, (value, origin) in merged.items()
    )


def configure(openmp=None):
    """Apply the three shims and THEANO_FLAGS; call before the first `import theano`. `openmp`
    (True/False) sets Theano's openmp flag (its C ops' OpenMP loops), None keeps Theano's
    default. Returns applied(). A second call returns the first call's record."""
    if _state["applied"] is not None:
        return _state["applied"]
    if "theano" in sys.modules:
        raise RuntimeError(
            "theano was imported before bench_theano.configure(): "
            "THEANO_FLAGS and the shims must come first"
        )
    restored = restore_collections_aliases()
    use_python_scan()
    cache_dir = compile_dir()
    ours = list(BENCH_FLAGS) + [("base_compiledir", cache_dir)]
    user = os.environ.get("THEANO_FLAGS", "")
    users = dict(parse_flags(user))
    if "blas.ldflags" not in users:  # a user's BLAS: scipy's is not needed
        # linked through the base_compiledir in force: the user's where they set one
        in_force = os.path.expanduser(users.get("base_compiledir") or cache_dir)
        ours.append(("blas.ldflags", blas_ldflags(in_force)))
    if openmp is not None:
        ours.append(("openmp", "True" if openmp else "False"))
    text, flags = compose_flags(user, ours)
    os.environ["THEANO_FLAGS"] = text
    _state["applied"] = {
        "theano_flags": flags,
        "user_theano_flags": user or None,
        "collections_aliases": restored,
        "python_scan": True,
    }
    return _state["applied"]


def applied():
    """What configure() set: THEANO_FLAGS by key with who set each (bench or user), the
    collections aliases it restored, the scan implementation; None before configure()."""
    return _state["applied"]


def versions():
    """Theano's, numpy's, scipy's versions and the BLAS Theano links (after configure())."""
    import numpy
    import scipy
    import theano

    return {
        "theano": theano.__version__,
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "blas": theano.config.blas.ldflags,
        "cxx": theano.config.cxx,
    }


# -- per run, after configure() and `import theano`: what every Theano front end applies ----
def openblas_handle():
    """scipy's OpenBLAS (the BLAS Theano's C ops link), opened by path: the same handle as
    the loaded library's; None where there is none."""
    import ctypes

    found = scipy_openblas()
    if found is None:
        return None
    directory, name = found
    return ctypes.CDLL(os.path.join(directory, "lib%s.so" % name))


def cpu_setup(options):
    """framework.options' threads and openmp applied (every Theano front end has both):
    Theano's OpenMP ops (CorrMM's im2col + GEMM per image, large elementwise ops) are built
    with -fopenmp, and GNU OpenMP reads OMP_NUM_THREADS when the first such module loads,
    after this; OpenMP off, the convolution's GEMMs run one after the other on OpenBLAS'
    threads. Returns the settings applied, with THEANO_FLAGS by origin."""
    import theano

    if not theano.config.cxx:
        raise RuntimeError(
            "Theano found no C++ compiler (g++): without one it runs every op in "
            "Python, orders of magnitude slower; install g++ (apt-get install g++)"
        )
    threads = options["threads"] or len(os.sched_getaffinity(0))
    theano.config.openmp = bool(options["openmp"])  # read by each op when the graph is built
    os.environ["OMP_NUM_THREADS"] = str(threads)
    blas = openblas_handle()
    blas_threads = None
    if blas is not None and hasattr(blas, "openblas_set_num_threads"):
        blas.openblas_set_num_threads(threads)
        blas_threads = blas.openblas_get_num_threads()
    flags = applied()
    return {
        "device": "cpu",
        "floatX": theano.config.floatX,
        "mode": theano.config.mode,
        "openmp": theano.config.openmp,
        "omp_num_threads": threads,
        "blas_threads": blas_threads,
        "blas_ldflags": theano.config.blas.ldflags,
        "compiledir": theano.config.compiledir,
        "theano_flags": flags["theano_flags"],
        "user_theano_flags": flags["user_theano_flags"],
        "python_scan": flags["python_scan"],
    }


def peak_flops(size=2048):
    """Dense matrix-multiply FLOP/s of a compiled T.dot (Theano's Dot22: scipy's OpenBLAS
    SGEMM), the utilisation denominator of every Theano front end."""
    import numpy as np
    import theano

    from bench_shared.timing import matmul_flops, peak_rate

    a = theano.shared(np.random.RandomState(0).standard_normal((size, size)).astype(np.float32))
    matmul = theano.function([], theano.tensor.dot(a, a).sum())  # the sum keeps the C op

    def work(n):
        for _ in range(n):
            matmul()  # returns NumPy: the product is done

    return peak_rate(work, matmul_flops(size))
