"""The worker-side tests run in the Python 3.6 environment of CNTK, where the orchestrator
(bench, hydra) is not installed: the run dict is built here from bench_shared.spec, as the
orchestrator's config schemas build theirs. tests_e2e/ covers the orchestrator's side."""
from bench_shared import spec

OPTIMIZERS = {
    "cnn": {"name": "sgd", "lr": spec.CNN.learning_rate, "momentum": spec.CNN.momentum},
    "rnn": {"name": "adam", "lr": spec.RNN.learning_rate, "beta1": spec.RNN.beta1,
            "beta2": spec.RNN.beta2, "eps": spec.RNN.epsilon},
}


def make_run(task, dropout=True, **options):
    info = spec.TASKS[task]
    run_task = {"name": task, "kind": "inference" if task == "resnet50" else "train",
                "batch_size": info.batch_size, "dropout": dropout}
    if task in OPTIMIZERS:
        run_task.update(epochs=info.epochs, optimizer=dict(OPTIMIZERS[task]))
    return {"task": run_task, "seed": 0, "precision": "fp32",
            "device": {"name": "cpu", "index": 0},
            "framework": {"name": "cntk", "package": "bench_cntk",
                          "options": dict({"threads": 0}, **options)}}


def loaded_model(task):
    """(run, model, neutral params): dropout off, the equivalence check's random weights."""
    import importlib

    import bench_cntk
    from bench_shared import weights

    run = make_run(task, dropout=False)
    bench_cntk.setup(run)
    module = importlib.import_module("bench_cntk." + task)
    model = module.build_model(run)
    params = weights.random_weights(task, seed=0)
    module.load_weights(model, params)
    return run, model, params
