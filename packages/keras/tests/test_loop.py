"""One model.fit trains every epoch (bench_keras.loop.train): the runtime's batches in the shared
order, each epoch bracketed by the callback, and a result as the worker's own epoch-by-epoch
loop (train_epoch) makes it: as many epochs, a loss per epoch, the same losses from the same
weights and batches, every evaluation outside the epochs' timed windows; and fit stops at the
quality target. In process, through the worker's own execute(), on this session's backend."""

import importlib
import types

import keras
import numpy as np
from conftest import make_run

from bench_shared import spec, timing, worker

EXAMPLES, BATCH, TEST = 48, 16, 32  # 3 steps an epoch: cheap on every backend's GRU


def gru_run(tmp_path, *overrides):
    """run.json for the GRU from neutral weights (no dropout: both paths compute the same),
    on small synthetic reviews written where the worker memory-maps them."""
    rng = np.random.RandomState(0)
    arrays = {
        "train_x": rng.randint(1, 500, (EXAMPLES, spec.RNN.seq_len)).astype("int32"),
        "train_y": rng.randint(0, 2, EXAMPLES).astype("int64"),
        "test_x": rng.randint(1, 500, (TEST, spec.RNN.seq_len)).astype("int32"),
        "test_y": rng.randint(0, 2, TEST).astype("int64"),
    }
    paths = {}
    for name, array in arrays.items():
        paths[name] = str(tmp_path / (name + ".npy"))
        np.save(paths[name], array)
    run = make_run(
        "task=rnn", "init=neutral", "preset.epochs=3", f"task.batch_size={BATCH}", *overrides
    )
    run["data"] = {"arrays": paths, "limits": {}}
    return run


def traced(monkeypatch, one_fit):
    """The task module as the worker loads it (without train: the epoch-by-epoch path), and
    the events of a run in order: the stopwatch's starts and stops, each fit and evaluation."""
    events = []

    class Stopwatch(timing.Stopwatch):
        def start(self):
            events.append("start")
            return super().start()

        def stop(self, name, start):
            super().stop(name, start)
            events[len(events) - 1 - events[::-1].index("start")] = "start " + name
            events.append("stop " + name)

    monkeypatch.setattr(worker, "Stopwatch", Stopwatch)

    def load_task(run):
        task = importlib.import_module(run["framework"]["package"] + ".rnn")

        def build_model(run):
            model = task.build_model(run)
            fit = model.fit
            model.fit = lambda *args, **kwargs: events.append("fit") or fit(*args, **kwargs)
            return model

        def predict(model, batches):
            events.append("evaluate")
            return task.predict(model, batches)

        functions = dict(vars(task), build_model=build_model, predict=predict)
        if not one_fit:
            del functions["train"]
        return types.SimpleNamespace(**functions)

    return load_task, events


def test_one_fit_trains_every_epoch_as_the_epoch_by_epoch_path(tmp_path, monkeypatch):
    losses, stamps = {}, {}
    for one_fit in (True, False):
        load_task, events = traced(monkeypatch, one_fit)
        result, code = worker.execute(gru_run(tmp_path), load_task)
        assert code == worker.EXIT_OK, result.get("traceback")
        # each epoch's evaluation after its timed window; one fit (in the first epoch's
        # window, as the epoch-by-epoch path's first fit), or one per epoch
        seen = [e for e in events if e in ("fit", "start epoch", "stop epoch", "evaluate")]
        window = ["start epoch", "fit", "stop epoch", "evaluate"]
        assert seen == (window + [e for e in window if e != "fit"] * 2 if one_fit else window * 3)
        steps = EXAMPLES // BATCH
        assert len(result["losses"]) == len(result["timings"]["epoch"]) == 3
        assert [(p["epoch"], p["step"]) for p in result["curve"]] == [
            (1, steps),
            (2, 2 * steps),
            (3, 3 * steps),
        ]
        assert result["timings"]["evaluation"] > 0 and result["timings"]["first_step"] > 0
        # a stamp per batch handed over (and one at an epoch's end where the input was read
        # past it: TensorFlow's prefetching pipeline, or where the clock stamps the steps
        # itself: the batches gathered inside tf.data, on TensorFlow)
        stamps[one_fit] = [len(b) for b in result["batch_seconds"]]
        losses[one_fit] = result["losses"]
    assert set(stamps[True]) | set(stamps[False]) <= {steps - 1, steps}
    if keras.backend.backend() == "tensorflow":
        assert stamps[True] == [steps] * 3
    # the same weights and batches in the same order: the same losses
    np.testing.assert_allclose(losses[True], losses[False], rtol=1e-4)


def test_one_fit_stops_at_the_quality_target(tmp_path, monkeypatch):
    load_task, events = traced(monkeypatch, one_fit=True)
    run = gru_run(tmp_path, "task.stop_at_target=true")
    run["quality_target"] = 0.0  # reached at the first evaluation
    result, code = worker.execute(run, load_task)
    assert code == worker.EXIT_OK, result.get("traceback")
    assert result["stopped_at_target"] == 1
    assert len(result["losses"]) == len(result["curve"]) == len(result["timings"]["epoch"]) == 1
    assert events.count("fit") == events.count("start epoch") == 1


def test_one_fit_refuses_an_epoch_that_did_not_read_its_batches(tmp_path, monkeypatch):
    """A fit whose epochs drift from the shared order (here: each epoch a step short of its
    batches) fails the run, naming what it read, rather than training shifted epochs."""
    from bench_keras import loop

    fit = loop.keras.Model.fit

    def short(model, *args, **kwargs):
        return fit(model, *args, **dict(kwargs, steps_per_epoch=kwargs["steps_per_epoch"] - 1))

    monkeypatch.setattr(loop.keras.Model, "fit", short)
    result, code = worker.execute(gru_run(tmp_path), traced(monkeypatch, one_fit=True)[0])
    assert code == worker.EXIT_FAILED
    assert "model.fit ran 2 steps of epoch 1, reading" in result["error"]
