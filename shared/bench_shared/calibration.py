"""Post-training quantization in a run (precision=int8, inference tasks), written once.

A quantized run goes: build the fp32 model, load its weights, compute the fp32 features of the
agreement images (untimed), calibrate -- the task module's `calibrate(model, batches)`, timed
apart as timings["calibration"], never inside the inference window -- then warm up and time
the int8 model as any other. Its result records `agreement`: the int8 features against the
fp32 ones on the same images (`feature_agreement`).

Calibration sees the first CALIBRATION_BATCHES of the run's batches (the task's own images,
what a deployment calibrates on); agreement is measured on the last AGREEMENT_BATCHES, so the
two sets differ wherever the run has more batches than that (preset=smoke's one batch serves
both).

The agreement measure, the same in a run, in `python -m bench verify` and in the conformance
suite (tolerances: conf/precision/<precision>.yaml):

- feature error: |int8 - fp32| / |fp32|, Frobenius norms over every image's 2048 features;
- top-1 agreement: the fraction of images whose arg-max agrees under one fixed linear read-out
  of 1,000 classes (ResNet-50 here ends at the pool: it has no fc layer of its own). The
  read-out is drawn by NumPy from READOUT_SEED, N(0, 1/2048) weights, and its bias cancels
  the mean fp32 feature of the compared images: features after a ReLU and a global pool share
  a large positive mean, which would otherwise pick the same class for every image and make
  any two feature sets "agree".

NumPy only, Python 3.6 (worker side).
"""

import numpy as np

from . import contract

CALIBRATION_BATCHES = 4
AGREEMENT_BATCHES = 4
READOUT_SEED, READOUT_CLASSES = 1000, 1000
# int8 rounding moves features by a percent or more; fp32 against itself by ~1e-7: a quantized
# run below this ran unquantized (a worker that skipped calibrate(), a model it ignored)
UNQUANTIZED_BELOW = 1e-4


def quantized(run):
    return run["precision"] in contract.QUANTIZED


def calibrate(run, task, model, batches, stopwatch):
    """The model to time: at a quantized precision the task module's calibrate() on the first
    CALIBRATION_BATCHES of `batches`, timed as "calibration"; otherwise `model` itself."""
    if not quantized(run):
        return model
    hook = contract.hook(task, "calibrate")
    if hook is None:
        raise NotImplementedError(
            "precision=%s is not supported by framework=%s for task=%s: "
            "%s has no calibrate(model, batches)"
            % (
                run["precision"],
                run["framework"]["name"],
                run["task"]["name"],
                getattr(task, "__name__", "its task module"),
            )
        )
    with stopwatch.region("calibration"):
        return hook(model, list(batches)[:CALIBRATION_BATCHES])


def fp32_reference(run, task, model, batches):
    """Before calibrate(): the fp32 model's outputs on the agreement batches, untimed, or None
    at a precision that is not quantized."""
    if not quantized(run):
        return None
    return np.asarray(task.predict(model, list(batches)[-AGREEMENT_BATCHES:]), np.float32)


def run_agreement(features, reference):
    """result["agreement"] of a quantized run: its timed output's last images (the agreement
    batches) against the fp32 reference of the same images."""
    return feature_agreement(np.asarray(features)[-len(reference) :], reference)


def readout(features, reference):
    """Arg-max classes of `features` under the fixed read-out whose bias cancels the mean of
    `reference` (the fp32 features of the same images)."""
    weights = np.random.RandomState(READOUT_SEED).normal(
        0.0, 1.0 / np.sqrt(reference.shape[1]), (reference.shape[1], READOUT_CLASSES)
    )
    centre = np.asarray(reference, np.float64).mean(axis=0)
    return np.argmax((np.asarray(features, np.float64) - centre).dot(weights), axis=1)


def feature_agreement(features, reference):
    """{feature_error, top1_agreement, images}: `features` (N, F) against the fp32 `reference`
    of the same N images."""
    features = np.asarray(features, np.float64)
    reference = np.asarray(reference, np.float64)
    if features.shape != reference.shape or features.ndim != 2:
        raise ValueError(
            "features %s and their fp32 reference %s differ in shape"
            % (features.shape, reference.shape)
        )
    error = np.linalg.norm(features - reference) / max(np.linalg.norm(reference), 1e-30)
    top1 = np.mean(readout(features, reference) == readout(reference, reference))
    return {
        "feature_error": float(error),
        "top1_agreement": float(top1),
        "images": int(len(reference)),
    }


def within(agreement, tolerance):
    """The ways `agreement` misses `tolerance` ({feature_error, top1_agreement}: a ceiling and a
    floor, conf/precision/<precision>.yaml) or shows no quantization at all, as sentences;
    empty when it meets both."""
    problems = []
    if agreement["feature_error"] < UNQUANTIZED_BELOW:
        problems.append(
            "feature error %.1e: no int8 rounding shows, the model ran unquantized"
            % agreement["feature_error"]
        )
    if not agreement["feature_error"] <= tolerance["feature_error"]:  # NaN fails too
        problems.append(
            "feature error %.2e > %g" % (agreement["feature_error"], tolerance["feature_error"])
        )
    if not agreement["top1_agreement"] >= tolerance["top1_agreement"]:
        problems.append(
            "top-1 agreement %.3f < %g" % (agreement["top1_agreement"], tolerance["top1_agreement"])
        )
    return problems
