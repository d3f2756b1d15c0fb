"""The shared conformance suite: bench_shared.conformance's checks for every framework declared
in conf/framework/ whose package imports in this interpreter, every task it declares.

Each framework's nox session runs this module in its own environment with
BENCH_TEST_FRAMEWORKS=<the frameworks it serves>: those must import (a session that promises
a framework and cannot import it fails). Without the variable, frameworks whose package is not
installed here are skipped, saying so. Valid Python 3.6: it runs in CNTK's environment too.
"""

import importlib
import os
import subprocess
import sys
import tempfile
from xml.etree import ElementTree

import pytest
import yaml

from bench_shared import conformance, contract, spec

HERE = os.path.dirname(os.path.abspath(__file__))
CONF = os.environ.get("BENCH_CONF_DIR") or os.path.join(HERE, os.pardir, os.pardir, "conf")
FRAMEWORK_DIR = os.path.join(CONF, "framework")


def declarations(directory=FRAMEWORK_DIR):
    found = {}
    for filename in sorted(os.listdir(directory)):
        if filename.endswith(".yaml"):
            with open(os.path.join(directory, filename)) as f:
                found[filename[:-5]] = yaml.safe_load(f)
    return found


DECLARED = declarations()
PRECISIONS = declarations(os.path.join(CONF, "precision"))  # their tolerances
SELECTED = [n for n in os.environ.get("BENCH_TEST_FRAMEWORKS", "").split(",") if n]
unknown = sorted(set(SELECTED) - set(DECLARED))
if unknown:
    raise ValueError(
        "BENCH_TEST_FRAMEWORKS names %s, which conf/framework/ does not declare" % unknown
    )


def slow(name, task, test):
    """Whether conf/framework/<name>.yaml lists this test of this task among its slow ones
    (`slow_tests`: task -> test names, `all` for every one): marked `slow`, they run in the
    `<env>_extended` session, not the default one."""
    listed = (DECLARED[name].get("slow_tests") or {}).get(task) or []
    return "all" in listed or test in listed


def case(name, task, test, value):
    return pytest.param(
        name, task, value, marks=[pytest.mark.slow] if slow(name, task, test) else []
    )


CASES = [
    case(name, task, check, check)
    for name in (SELECTED or sorted(DECLARED))
    for task in sorted(spec.TASKS)
    if task in DECLARED[name]["capabilities"]["tasks"]
    for check in sorted(conformance.CHECKS)
    if spec.TASKS[task].kind == "train" or check not in conformance.TRAINING_ONLY
]


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


# The instruction sets a precision's kernels are tested at: the CPU's own, and where it has
# AVX-512 also oneDNN capped at AVX2, the path a CPU without AVX-512 takes (bf16 emulated or
# refused), so that one machine tests both (docs/testing.md)
ISAS = ["native"] + (["avx2"] if "avx512f" in cpu_flags() else [])
# every precision other than fp32 that a framework declares on the CPU, for each task it runs
# there: against the reference within that precision's tolerances
PRECISION_CASES = [
    pytest.param(
        *p.values,
        isa,
        marks=list(p.marks)
        + [pytest.mark.own_process("%s-%s-%s" % (p.values[0], p.values[2], isa))],
    )
    for p in (
        case(name, task, "precision", precision)
        for name in (SELECTED or sorted(DECLARED))
        for precision in DECLARED[name]["capabilities"]["precisions"].get("cpu", [])
        if precision != "fp32"
        for task in sorted(spec.TASKS)
        if task in DECLARED[name]["capabilities"]["tasks"]
        and contract.unsupported(DECLARED[name]["capabilities"], name, task, "cpu", precision)
        is None
    )
    for isa in ISAS
]
ISOLATED = "BENCH_ISOLATED_GROUP"  # the group of tests a process was started to run
_outcomes = {}  # group -> {node id: (outcome, message)}, from the group's own process


def in_own_process(request, group, env=None):
    """Run the tests of `group` (this one and the others collected with it: one framework's
    cases of one precision) again in a fresh interpreter, as a run is, with `env` added: a
    precision's set-up is global to a process (MXNet's amp.init() rewrites its operator
    namespaces for every later test there, and a CPU with bf16 kernels takes that path where
    another CPU refuses it). True in that process, where the test goes on; here, the test's
    outcome there is made this test's and False is returned."""
    if os.environ.get(ISOLATED) == group:
        return True
    if group not in _outcomes:
        members = [
            item.nodeid
            for item in request.session.items
            if item.get_closest_marker("own_process") is not None
            and item.get_closest_marker("own_process").args[0] == group
        ] or [request.node.nodeid]
        _outcomes[group] = _run_group(request, group, members, env)
    outcome, message = _outcomes[group].get(request.node.nodeid, ("missing", ""))
    if outcome == "skipped":
        pytest.skip(message)
    if outcome != "passed":
        pytest.fail("in a process of its own (%s):\n%s" % (outcome, message))
    return False


def _run_group(request, group, members, env):
    """{node id: (passed | skipped | failed | missing, message)} of `members` run by pytest
    in one fresh process."""
    root = str(request.config.rootdir)
    report = os.path.join(tempfile.mkdtemp(prefix="bench-own-process-"), "report.xml")
    child = dict(os.environ, **(env or {}))
    child[ISOLATED] = group
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml", report]
        + [os.path.join(root, n.partition("::")[0]) + "::" + n.partition("::")[2] for n in members],
        cwd=root,
        env=child,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        universal_newlines=True,
    )
    found = {}
    try:
        cases = ElementTree.parse(report).getroot().iter("testcase")
    except (OSError, ElementTree.ParseError):
        cases = []
    names = {n.partition("::")[2]: n for n in members}
    for case in cases:
        nodeid = names.get(case.get("name"))
        if nodeid is None:
            continue
        problem = case.find("failure")
        if problem is None:  # (an Element without children is false: no `or` here)
            problem = case.find("error")
        skipped = case.find("skipped")
        if problem is not None:
            found[nodeid] = ("failed", (problem.text or problem.get("message") or "")[-3000:])
        elif skipped is not None:
            found[nodeid] = ("skipped", skipped.get("message") or "skipped in its own process")
        else:
            found[nodeid] = ("passed", "")
    for nodeid in members:
        found.setdefault(
            nodeid, ("missing", "exit %d:\n%s" % (done.returncode, done.stdout[-3000:]))
        )
    return found


_frameworks = {}


def framework(name):
    if name not in _frameworks:
        try:
            importlib.import_module(DECLARED[name]["package"])
        except ImportError as exc:
            if name in SELECTED:
                raise
            _frameworks[name] = (
                "framework=%s: %s is not installed in this interpreter (%s); "
                "its nox session runs these checks" % (name, DECLARED[name]["package"], exc)
            )
        else:
            _frameworks[name] = conformance.Framework(DECLARED[name])
    if isinstance(_frameworks[name], str):
        pytest.skip(_frameworks[name])
    return _frameworks[name]


@pytest.mark.parametrize("name,task,check", CASES)
def test_conformance(name, task, check):
    conformance.CHECKS[check](framework(name), task)


@pytest.mark.parametrize("name,task,precision,isa", PRECISION_CASES)
def test_precision(request, name, task, precision, isa):
    fw = framework(name)  # a framework not installed here is skipped without a process
    capped = {} if isa == "native" else {"ONEDNN_MAX_CPU_ISA": "AVX2", "DNNL_MAX_CPU_ISA": "AVX2"}
    if not in_own_process(request, "%s-%s-%s" % (name, precision, isa), capped):
        return
    try:
        conformance.check_precision(fw, task, precision, PRECISIONS[precision])
    except conformance.NotOnThisMachine as exc:
        pytest.skip("framework=%s refuses precision=%s here: %s" % (name, precision, exc))


def test_every_framework_declares_known_tasks_and_precisions():
    assert sorted(PRECISIONS) == sorted(contract.PRECISIONS)
    for name, declared in DECLARED.items():
        caps = declared["capabilities"]
        assert set(caps["tasks"]) <= set(spec.TASKS), name
        for device, precisions in caps["precisions"].items():
            assert device in ("cpu", "gpu") and set(precisions) <= set(contract.PRECISIONS)
        assert set(caps.get("precisions_reason") or {}) <= set(contract.PRECISIONS), name


def test_every_framework_says_why_it_lacks_bf16_on_a_cpu():
    """bf16 is the precision a CPU offers beside fp32: a row without it says why."""
    for name, declared in DECLARED.items():
        caps = declared["capabilities"]
        if "bf16" not in caps["precisions"].get("cpu", []):
            assert (caps.get("precisions_reason") or {}).get("bf16"), name
