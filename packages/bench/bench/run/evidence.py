"""A result is evidence, not a claim: every figure it publishes (its statistics, its accuracy,
its time to target) must follow from the raw measurements recorded in the same file (the epoch
and batch times, the batches per epoch and their size, the learning curve, the inference
times), and those measurements must be possible ones (times that are positive and do not go
backwards, one curve point per epoch, an accuracy between 0 and 1).

`problems(result)` re-derives every figure with the same code that derived it when the run
ended (bench.run.record.derive) and says, field by field, what does not follow. Every reader
of results calls it through bench.run.record.load, so that a figure edited by hand, a curve
that cannot have been measured or a statistic recorded for a run that did not finish ok is
refused wherever results are read: `report` skips the file with one line, `check` calls it
INVALID, `reproduce` refuses it before anything runs.
"""

import math

from . import canary as canary_module
from . import hostwatch, record

# two floats are the same figure within this (JSON keeps a float's every digit: the margin is
# for arithmetic in another order, never for a figure edited by hand)
RELATIVE = 1e-6
ABSOLUTE = 1e-9


def _close(a, b):
    return abs(a - b) <= ABSOLUTE + RELATIVE * max(abs(a), abs(b))


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _shown(value):
    return f"{value:.6g}" if _number(value) else repr(value)


def _task(result):
    """The task as the worker ran it: the recorded effective task (schema 2), else the
    composed one (a schema 1 result, from before the preset's values were kept)."""
    return result.get("effective_task") or (result.get("config") or {}).get("task") or {}


def _times(name, values, problems, positive=True):
    """Whether `values` is a list of finite times (positive ones, or 0 and more); a problem
    for the first that is not."""
    if not isinstance(values, list) or not values:
        problems.append(f"{name}: no times recorded")
        return False
    for i, value in enumerate(values):
        if not _number(value) or value < 0 or (positive and value == 0):
            problems.append(f"{name}[{i}]: {_shown(value)} is not a possible time")
            return False
    return True


def _training(result, task, problems):
    epochs = (result.get("timings") or {}).get("epoch")
    if not _times("timings.epoch", epochs, problems):
        return False
    batches = result.get("batches_per_epoch")
    if not isinstance(batches, int) or isinstance(batches, bool) or batches < 1:
        problems.append(f"batches_per_epoch: {_shown(batches)} is not a number of batches")
        return False
    if not isinstance(task.get("batch_size"), int) or task["batch_size"] < 1:
        problems.append(f"effective_task.batch_size: {_shown(task.get('batch_size'))}")
        return False
    losses = result.get("losses")
    if losses is not None and len(losses) != len(epochs):
        problems.append(f"losses: {len(losses)} for {len(epochs)} timed epochs")
    # batch times are the clock between the batches' hand-overs: one Keras fit stamps across
    # an epoch's end, so they are checked as times, not against the epoch's
    for i, seconds in enumerate(result.get("batch_seconds") or []):
        if not isinstance(seconds, list) or not all(_number(s) and s >= 0 for s in seconds):
            problems.append(f"batch_seconds[{i}]: not a list of possible times")
            break
    if result.get("batch_seconds") and len(result["batch_seconds"]) != len(epochs):
        problems.append(
            f"batch_seconds: {len(result['batch_seconds'])} epochs for {len(epochs)} timed"
        )
    _curve(result, epochs, batches, problems)
    return True


def _curve(result, epochs, batches, problems):
    """The learning curve: one point per evaluated epoch, in order, at the training seconds
    of the epochs before it, each accuracy between 0 and 1; the run's accuracy its last."""
    curve = result.get("curve")
    if curve is None:
        return
    last_epoch = 0
    for i, point in enumerate(curve):
        where = f"curve[{i}]"
        epoch = point.get("epoch")
        if not isinstance(epoch, int) or epoch <= last_epoch or epoch > len(epochs):
            problems.append(
                f"{where}.epoch: {_shown(epoch)} after epoch {last_epoch} of "
                f"{len(epochs)} timed (one point per epoch, in order)"
            )
            return
        last_epoch = epoch
        trained = sum(epochs[:epoch])
        if not _number(point.get("train_seconds")) or not _close(point["train_seconds"], trained):
            problems.append(
                f"{where}.train_seconds: {_shown(point.get('train_seconds'))} is not the "
                f"{trained:.6g} s its {epoch} epoch(s) took"
            )
            return
        if point.get("step") != epoch * batches:
            problems.append(
                f"{where}.step: {_shown(point.get('step'))} is not {epoch} epoch(s) of "
                f"{batches} batches"
            )
            return
        accuracy = point.get("accuracy")
        if not _number(accuracy) or not 0 <= accuracy <= 1:
            problems.append(f"{where}.accuracy: {_shown(accuracy)} is not between 0 and 1")
            return
    if curve and result.get("accuracy") != curve[-1]["accuracy"]:
        problems.append(
            f"accuracy: {_shown(result.get('accuracy'))} is not the last evaluation's "
            f"{_shown(curve[-1]['accuracy'])}"
        )


def _inference(result, task, problems):
    if not _times("timings.inference", (result.get("timings") or {}).get("inference"), problems):
        return False
    images, expected = result.get("images"), None
    if isinstance(task.get("batch_size"), int) and isinstance(task.get("num_batches"), int):
        expected = task["batch_size"] * task["num_batches"]
    if not isinstance(images, int) or images < 1 or (expected and images != expected):
        problems.append(
            f"images: {_shown(images)} is not the {expected or 'positive'} images its batches hold"
        )
        return False
    return True


def _derived(result, task, problems):
    """Every recorded statistic against the one derived again from the raw measurements."""
    recorded = result.get("stats") or {}
    derived = record.derive(result, task, result.get("host_peak"))
    for key, value in sorted(recorded.items()):
        if key not in derived:
            problems.append(f"stats.{key}: not derived from any measurement in the file")
        elif _number(value) and _number(derived[key]):
            if not _close(value, derived[key]):
                problems.append(
                    f"stats.{key}: {_shown(value)} does not follow from the measurements "
                    f"({_shown(derived[key])})"
                )
        elif value != derived[key] and not (value is None and derived[key] is None):
            problems.append(
                f"stats.{key}: {_shown(value)} does not follow from the measurements "
                f"({_shown(derived[key])})"
            )


def _host_state(result, problems):
    """The host's figures and the disturbed flag against those derived again from the span's
    counters, the canary's times and the thresholds recorded beside them."""
    state = result.get("host_state")
    if not isinstance(state, dict):
        return
    canary = state.get("canary")
    if canary:
        try:
            slowdown = hostwatch_slowdown(canary)
        except (KeyError, TypeError, ZeroDivisionError):
            problems.append("host_state.canary: its times or its reference are missing")
            return
        if not _close(canary.get("slowdown", float("nan")), slowdown):
            problems.append(
                f"host_state.canary.slowdown: {_shown(canary.get('slowdown'))} does not follow "
                f"from the canary's times ({slowdown:.4g})"
            )
    figures = {"steal": 0.0, "others": 0.0, "others_noise": 0.0}
    if state.get("watched"):
        try:
            figures = hostwatch.figures(state["span"]["ticks"])
        except (KeyError, TypeError):
            problems.append("host_state.span: its ticks are missing")
            return
        for key, value in figures.items():
            if not _number(state.get(key)) or abs(state[key] - value) > 1e-4:
                problems.append(
                    f"host_state.{key}: {_shown(state.get(key))} does not follow from the "
                    f"span's ticks ({value:.4g})"
                )
    try:
        disturbed, _ = hostwatch.verdict(figures, canary, state["thresholds"])
    except (KeyError, TypeError):
        problems.append("host_state.thresholds: missing")
        return
    if state.get("disturbed") is not disturbed:
        problems.append(
            f"host_state.disturbed: {_shown(state.get('disturbed'))} does not follow from the "
            f"figures and thresholds ({disturbed})"
        )


def hostwatch_slowdown(canary):
    return canary_module.slowdown(canary["before"], canary["after"], canary["reference"])


def problems(result):
    """What in a result does not follow from its own measurements: ["field: why", ...]
    (empty: every figure follows)."""
    found = []
    status = result.get("status")
    if status != "ok":
        if result.get("stats"):
            found.append(f"stats: figures recorded for a run whose status is {status}")
        return found
    task = _task(result)
    kind = task.get("kind") or (result.get("config") or {}).get("task", {}).get("kind")
    accuracy = result.get("accuracy")
    if kind == "train" and (not _number(accuracy) or not 0 <= accuracy <= 1):
        found.append(f"accuracy: {_shown(accuracy)} is not between 0 and 1")
    measured = (_training if kind == "train" else _inference)(result, task, found)
    if measured and not found:
        _derived(result, task, found)
    _host_state(result, found)
    return found
