"""The shared conformance suite: bench_shared.conformance's checks for every framework declared
in conf/framework/ whose package imports in this interpreter, every task it declares.

Each framework's nox session runs this module in its own environment with
BENCH_TEST_FRAMEWORKS=<the frameworks it serves>: those must import (a session that promises
a framework and cannot import it fails). Without the variable, frameworks whose package is not
installed here are skipped, saying so. Valid Python 3.6: it runs in CNTK's environment too.
"""
import importlib
import os

import pytest
import yaml

from bench_shared import conformance, spec

HERE = os.path.dirname(os.path.abspath(__file__))
CONF = os.environ.get("BENCH_CONF_DIR") or os.path.join(HERE, os.pardir, os.pardir, "conf")
FRAMEWORK_DIR = os.path.join(CONF, "framework")


def declarations():
    found = {}
    for filename in sorted(os.listdir(FRAMEWORK_DIR)):
        if filename.endswith(".yaml"):
            with open(os.path.join(FRAMEWORK_DIR, filename)) as f:
                found[filename[:-5]] = yaml.safe_load(f)
    return found


DECLARED = declarations()
SELECTED = [n for n in os.environ.get("BENCH_TEST_FRAMEWORKS", "").split(",") if n]
unknown = sorted(set(SELECTED) - set(DECLARED))
if unknown:
    raise ValueError("BENCH_TEST_FRAMEWORKS names %s, which conf/framework/ does not declare"
                     % unknown)
CASES = [(name, task, check)
         for name in (SELECTED or sorted(DECLARED))
         for task in sorted(spec.TASKS) if task in DECLARED[name]["capabilities"]["tasks"]
         for check in sorted(conformance.CHECKS)
         if spec.TASKS[task].kind == "train" or check not in conformance.TRAINING_ONLY]
_frameworks = {}


def framework(name):
    if name not in _frameworks:
        try:
            importlib.import_module(DECLARED[name]["package"])
        except ImportError as exc:
            if name in SELECTED:
                raise
            _frameworks[name] = "framework=%s: %s is not installed in this interpreter (%s); " \
                "its nox session runs these checks" % (name, DECLARED[name]["package"], exc)
        else:
            _frameworks[name] = conformance.Framework(DECLARED[name])
    if isinstance(_frameworks[name], str):
        pytest.skip(_frameworks[name])
    return _frameworks[name]


@pytest.mark.parametrize("name,task,check", CASES)
def test_conformance(name, task, check):
    conformance.CHECKS[check](framework(name), task)


def test_every_framework_declares_known_tasks_and_precisions():
    for name, declared in DECLARED.items():
        caps = declared["capabilities"]
        assert set(caps["tasks"]) <= set(spec.TASKS), name
        for device, precisions in caps["precisions"].items():
            assert device in ("cpu", "gpu") and set(precisions) <= {"fp32", "fp16", "bf16"}
