"""The worker-side tests run in the Python 3.6 environment of CNTK, where the orchestrator
(bench, hydra) is not installed: run dicts come from the runtime's contract.make_run and
conf/framework/cntk.yaml, as the orchestrator writes them. tests_e2e/ covers the
orchestrator's side."""

import os

import yaml

from bench_shared import contract

CONF = os.environ.get("BENCH_CONF_DIR") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, os.pardir, "conf"
)

with open(os.path.join(CONF, "framework", "cntk.yaml")) as f:
    DECLARED = yaml.safe_load(f)


def make_run(task, dropout=True, **options):
    """run.json for `task` on CNTK (fp32, CPU); dropout is a field of the CNN's task only."""
    fields = {"dropout": dropout} if task == "cnn" else {}
    return contract.make_run(DECLARED, task, options=options, **fields)


def loaded_model(task):
    """(run, model, neutral params): dropout off, the equivalence check's random weights,
    loaded through the runtime's weight protocol."""
    import importlib

    import bench_cntk
    from bench_shared import slots, weights

    run = make_run(task, dropout=False)
    contract.check_run(run)
    bench_cntk.setup(run)
    module = importlib.import_module("bench_cntk." + task)
    model = module.build_model(run)
    params = weights.random_weights(task, seed=0)
    slots.load_into(bench_cntk, module, task, model, params)
    return run, model, params
