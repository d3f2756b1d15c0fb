"""The Keras 2 framework this session tests: the one whose backend this process's Keras runs
(KERAS_BACKEND, set by the noxfile's test_env: cntk in the cntk environment, theano in the
theano one). Run dicts come from the runtime's contract.make_run and conf/framework/keras_*.yaml,
as the orchestrator writes them (the cntk environment, Python 3.6, has no orchestrator)."""

import os

import yaml

import bench_keras2  # first: its backend's set-up (Theano's shims) precedes keras' import
from bench_shared import contract

CONF = os.environ.get("BENCH_CONF_DIR") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, os.pardir, "conf"
)


def declared(name):
    with open(os.path.join(CONF, "framework", name + ".yaml")) as f:
        return yaml.safe_load(f)


FRAMEWORK = {backend: name for name, backend in bench_keras2.BACKENDS.items()}[
    bench_keras2.K.backend()
]


def make_run(task, name=FRAMEWORK):
    """run.json for `task` (fp32, CPU); dropout off for the CNN."""
    fields = {"dropout": False} if task == "cnn" else {}
    return contract.make_run(declared(name), task, **fields)
