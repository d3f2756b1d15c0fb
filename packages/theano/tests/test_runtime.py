"""bench_theano: the three shims and THEANO_FLAGS, each checked in a fresh interpreter (the
set-up must come before the first `import theano`, which happens once per process)."""

import json
import os
import subprocess
import sys

import pytest

import bench_theano

PROBE = r"""
import json, sys
import bench_theano
applied = bench_theano.configure()
import collections
import numpy as np
import theano, theano.tensor as T
from theano.tensor import blas
x = T.fvector()
zero = T.constant(0.0, dtype="float32")
cumsum, _ = theano.scan(lambda v, acc: acc + v, sequences=x, outputs_info=zero)
f = theano.function([x], cumsum)
print(json.dumps({
    "applied": applied,
    "floatX": theano.config.floatX, "openmp": theano.config.openmp,
    "compiledir": theano.config.compiledir, "prefix": sys.prefix,
    "base_compiledir": theano.config.base_compiledir, "pins_key": bench_theano.pins_key(),
    "blas_libs": blas.ldflags(), "blas_dirs": blas.ldflags(libs=False, libs_dir=True),
    "scan_ext": repr(sys.modules.get("theano.scan_module.scan_perform_ext", "absent")),
    "mapping": collections.Mapping is collections.abc.Mapping,
    "cumsum": f(np.arange(1, 5, dtype="float32")).tolist(),
}))
"""


def probe(theano_flags=None):
    env = dict(os.environ)
    env.pop("THEANO_FLAGS", None)
    if theano_flags is not None:
        env["THEANO_FLAGS"] = theano_flags
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_shims_and_flags_in_a_fresh_interpreter():
    seen = probe()
    assert seen["floatX"] == "float32"
    flags = seen["applied"]["theano_flags"]
    assert all(flag["from"] == "bench" for flag in flags.values())
    # (a) Theano links scipy's LP64 OpenBLAS, not numpy's ILP64 one
    assert len(seen["blas_libs"]) == 1 and seen["blas_libs"][0].startswith("openblas")
    assert "openblas64" not in seen["blas_libs"][0]
    # linked through a fixed place in the compile cache (Theano keys its modules by the link
    # flags), which leads to this environment's scipy OpenBLAS
    (blas_dir,) = seen["blas_dirs"]
    assert blas_dir.startswith(seen["base_compiledir"] + os.sep)
    library = os.path.realpath(os.path.join(blas_dir, "lib%s.so" % seen["blas_libs"][0]))
    assert library.startswith(seen["prefix"] + os.sep)
    assert os.path.basename(os.path.dirname(library)) == "scipy.libs"
    # (b) the Cython scan is refused and Theano's pure-Python loop computes the scan
    assert seen["scan_ext"] == "None"
    assert seen["cumsum"] == [1.0, 3.0, 6.0, 10.0]
    # (c) collections' removed ABC aliases are back
    assert seen["mapping"] is True
    # the compile cache is Theano's default place, one directory per set of pins, shared by
    # every worker and every environment with these pins
    home = os.path.join(os.path.expanduser("~"), ".theano")
    assert seen["base_compiledir"] == os.path.join(home, "rosetta-bench-" + seen["pins_key"])
    assert seen["compiledir"].startswith(seen["base_compiledir"] + os.sep)


def test_the_users_theano_flags_win_and_are_reported(tmp_path):
    user = "floatX=float64,openmp=False,base_compiledir=%s" % tmp_path
    seen = probe(user)
    assert seen["floatX"] == "float64" and seen["openmp"] is False
    flags = seen["applied"]["theano_flags"]
    assert flags["floatX"] == {"value": "float64", "from": "user"}
    assert flags["openmp"] == {"value": "False", "from": "user"}
    assert flags["base_compiledir"] == {"value": str(tmp_path), "from": "user"}
    assert flags["device"] == {"value": "cpu", "from": "bench"}
    assert seen["applied"]["user_theano_flags"] == user
    # the user's compile directory holds the modules and the link to scipy's OpenBLAS
    assert seen["compiledir"].startswith(str(tmp_path) + os.sep)
    assert seen["blas_dirs"][0].startswith(str(tmp_path) + os.sep)


def test_compose_flags_merges_under_the_user():
    text, flags = bench_theano.compose_flags(
        " floatX=float64 ,,cxx=", [("floatX", "float32"), ("device", "cpu")]
    )
    assert text == "floatX=float64,device=cpu,cxx="
    assert flags["floatX"]["from"] == "user" and flags["device"]["from"] == "bench"


def test_configure_refuses_to_come_after_theano():
    # a stand-in module: a real `import theano` here would compile into ~/.theano
    code = (
        "import sys, types\nsys.modules['theano'] = types.ModuleType('theano')\n"
        "import bench_theano\nbench_theano.configure()"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode != 0
    assert "theano was imported before" in out.stderr


@pytest.mark.parametrize("missing", [True, False])
def test_scipy_openblas_is_found_or_the_error_says_what_to_do(monkeypatch, missing, tmp_path):
    if missing:
        monkeypatch.setattr(bench_theano, "scipy_openblas", lambda: None)
        with pytest.raises(RuntimeError, match="pip install scipy"):
            bench_theano.blas_ldflags(str(tmp_path))
    else:
        assert bench_theano.blas_ldflags(str(tmp_path)).startswith("-L")
