"""bench_shared.calibration: the agreement measure of a quantized precision, and the
calibration step a run and `verify` share (a stand-in task module, NumPy only)."""

import numpy as np
import pytest

from bench_shared import calibration
from bench_shared.timing import Stopwatch


def features(images=64, seed=0):
    """Pooled-ReLU-like features: a large mean every image shares, small differences."""
    rng = np.random.RandomState(seed)
    return 0.5 + rng.uniform(0, 1, 2048) + 0.2 * rng.normal(0, 1, (images, 2048))


def test_identical_features_agree_fully():
    f = features()
    assert calibration.feature_agreement(f, f) == {
        "feature_error": 0.0,
        "top1_agreement": 1.0,
        "images": 64,
    }


def test_small_noise_keeps_the_arg_max_and_large_noise_does_not():
    f = features()
    rng = np.random.RandomState(1)
    close = calibration.feature_agreement(f + 0.002 * rng.normal(0, 1, f.shape), f)
    far = calibration.feature_agreement(f + 0.5 * rng.normal(0, 1, f.shape), f)
    assert close["feature_error"] < 0.01 and close["top1_agreement"] > 0.9
    assert far["top1_agreement"] < 0.5


def test_the_shared_mean_does_not_make_unrelated_features_agree():
    """Without the read-out's centring every image of both sets would pick the class of the
    mean they share: two unrelated sets must not agree."""
    f, g = features(seed=0), features(seed=0)[::-1]  # the same mean, other images
    assert calibration.feature_agreement(g, f)["top1_agreement"] < 0.2


def test_tolerances_are_a_ceiling_and_a_floor():
    tolerance = {"feature_error": 0.05, "top1_agreement": 0.5}
    assert calibration.within({"feature_error": 0.01, "top1_agreement": 0.9}, tolerance) == []
    problems = calibration.within({"feature_error": 0.1, "top1_agreement": 0.4}, tolerance)
    assert problems == ["feature error 1.00e-01 > 0.05", "top-1 agreement 0.400 < 0.5"]
    assert calibration.within({"feature_error": float("nan"), "top1_agreement": 1.0}, tolerance)
    (unquantized,) = calibration.within({"feature_error": 3e-7, "top1_agreement": 1.0}, tolerance)
    assert unquantized == "feature error 3.0e-07: no int8 rounding shows, the model ran unquantized"


class Task(object):
    """A task module with the contract's calibrate()."""

    __name__ = "stand_in"

    def __init__(self):
        self.seen = None

    def predict(self, model, batches):
        return np.concatenate([x.reshape(len(x), -1) * model for x in batches])

    def calibrate(self, model, batches):
        self.seen = len(batches)
        return model * 2


def run(precision):
    return {"precision": precision, "framework": {"name": "stand_in"}, "task": {"name": "resnet50"}}


def test_calibration_runs_at_int8_only_timed_apart_on_the_first_batches():
    task, batches = Task(), [np.ones((2, 3)) * i for i in range(6)]
    stopwatch = Stopwatch(lambda: None)
    assert calibration.calibrate(run("fp32"), task, 1, batches, stopwatch) == 1
    assert calibration.fp32_reference(run("fp32"), task, 1, batches) is None
    assert task.seen is None and stopwatch.regions == {}
    reference = calibration.fp32_reference(run("int8"), task, 1, batches)
    assert reference.shape == (2 * calibration.AGREEMENT_BATCHES, 3)
    assert calibration.calibrate(run("int8"), task, 1, batches, stopwatch) == 2
    assert task.seen == calibration.CALIBRATION_BATCHES
    assert list(stopwatch.regions) == ["calibration"]


def test_a_task_without_calibrate_is_unsupported_at_int8():
    class Plain(object):
        __name__ = "plain"

    with pytest.raises(NotImplementedError) as refused:
        calibration.calibrate(run("int8"), Plain(), 1, [], Stopwatch(lambda: None))
    assert "precision=int8 is not supported by framework=stand_in for task=resnet50" in str(
        refused.value
    )
