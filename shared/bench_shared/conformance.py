"""The conformance checks every framework package must pass, written once.

NumPy-only and valid Python 3.6, so that they run inside every framework's own interpreter
(CNTK's 3.6 included): shared/tests/test_conformance.py runs them for every framework found in
conf/framework/ whose package imports there, the way Keras 3 runs one suite on every backend.
Each check raises ConformanceError saying what differs; a framework's own tests keep only
what is specific to it.

    fw = Framework(declared)            # declared: conf/framework/<fw>.yaml as plain data
    check_parameter_count(fw, "cnn")
    check_reference_forward(fw, "cnn")  # neutral weights in, the NumPy reference's outputs out
    check_export_round_trip(fw, "cnn")  # loaded == exported, bit for bit, in the neutral order
    check_training_steps(fw, "cnn")     # N optimiser steps == the NumPy reference's losses,
                                        # and its trained weights
    check_weight_protocol(fw, "cnn")    # a converter that skips or reuses a tensor fails
    check_deterministic_prediction(fw, "cnn")  # inference mode: dropout off
    check_native_initialisers(fw, "rnn")  # its own initial weights follow SPEC's rules
    check_precision(fw, "resnet50", "int8", tolerances)  # a declared precision other than
                                        # fp32 against the reference, within its tolerances
"""

import importlib

import numpy as np

from . import (
    calibration,
    contract,
    reference,
    reference_cache,
    reference_train,
    slots,
    spec,
    weights,
)
from .timing import Stopwatch

# fp32 against the float64 reference: summation order only (measured 2e-7 .. 4e-7)
FORWARD_TOLERANCE = 1e-5
# N steps of fp32 training from the same weights on the same batches; a convention error
# (momentum, loss reduction, gate order) shows at 1e-2 and more within a few steps
TRAIN_STEPS, TRAIN_BATCH_SIZE, TRAIN_TOLERANCE = 8, 8, 1e-3
# DenseNet: 120 convolutions with batch statistics under Adam drift from float64 by ~5e-4 in
# 4 steps, 1.5e-3 in 8 (PyTorch); a wrong learning rate or loss reduction shows at 1e-2 in 2
TRAIN_STEPS_OF = {"densenet": 4}
# The trained weights after those steps: per tensor, max |change - reference change| over
# max |reference change| (the steps' own size; a tensor the steps leave alone is compared
# absolutely). The reference follows the framework's form of Adam (its YAML's
# `adam_epsilon`: reference_train.adam_step), which otherwise moves an embedding's rare words
# by most of their step. fp32 against float64 leaves the CNN's weights within 4e-3 (a max
# pool or ReLU kink that rounding tips the other way routes a gradient elsewhere) and the
# GRU's within 7e-4; an optimiser that squares an embedding's slices before summing them
# moves frequent words by up to sqrt(k) of their step, a broken one by the whole step.
WEIGHT_TOLERANCE = 2e-2
# DenseNet: Adam's first steps move every weight by about lr * sign(gradient), and thousands
# of its weights (batch norm's shift and scale of a nearly dead channel, above all) have
# gradients within rounding of zero, which any correct implementation may move either way:
# per tensor the largest element is then a whole step off (PyTorch: 1.3). So DenseNet compares
# norms, |change - reference change| / |reference change| (PyTorch: 0.18 in 4 steps; a wrong
# learning rate, or a step not taken, is 0.5 and more).
WEIGHT_CHECK_OF = {"densenet": ("norm", 0.4)}


# a quantized precision: its agreement with the reference on images whose features differ
# (reference.distinct_images), after calibrating on others of the same kind (as `verify`)
AGREEMENT_IMAGES, CALIBRATION_IMAGES = 16, 8
# a mixed precision's forward check of DenseNet-121: the same layers at 64 x 64 (an emulated
# bf16 forward of four 224 x 224 images took minutes on a 2-core AVX2 CPU)
PRECISION_IMAGE_SIZE = 64


class ConformanceError(AssertionError):
    pass


class NotOnThisMachine(Exception):
    """The framework's setup refused a declared combination for a fact of this machine (MXNet's
    bf16 without AVX-512): a check that cannot run here, said as such, never a pass."""


class Framework(object):
    """A declared framework, imported in this interpreter: builds its task models."""

    def __init__(self, declared):
        self.declared = declared
        self.name = declared["name"]
        self.package = importlib.import_module(declared["package"])
        self._kept = {}  # kind -> (task, what built() or loaded() returned): the last task's

    def supports(self, task):
        return task in self.declared["capabilities"]["tasks"]

    def module(self, task):
        return importlib.import_module(self.declared["package"] + "." + task)

    def build(self, task, dropout=True, **run_options):
        """(run, task module, model), set up as the worker would (fp32, CPU)."""
        fields = {"dropout": dropout} if task == "cnn" else {}
        run = contract.make_run(self.declared, task, **dict(run_options, **fields))
        contract.check_run(run)
        self.package.setup(run)
        module = self.module(task)
        return run, module, module.build_model(run)

    def loaded(self, task):
        """(run, module, model, params): dropout off, the deterministic neutral weights."""
        run, module, model = self.build(task, dropout=False)
        params = weights.random_weights(task, seed=0)
        slots.load_into(self.package, module, task, model, params)
        return run, module, model, params

    def _keep(self, kind, task, make):
        if self._kept.get(kind, (None,))[0] != task:
            self._kept[kind] = (task, make(task))
        return self._kept[kind][1]

    def built(self, task):
        """build(task) made once per task for the checks that only read the model (a build
        of TensorFlow's DenseNet-121 takes ~8 s): they must not train it or load weights."""
        return self._keep("built", task, self.build)

    def loaded_once(self, task):
        """loaded(task) made once per task for the checks that only predict with it or read
        its weights (not for training steps)."""
        return self._keep("loaded", task, self.loaded)

    def native(self, module, x):
        layout = contract.hook(module, "native_layout")
        return layout(x) if layout else x


def _fail(fw, task, message, *args):
    raise ConformanceError("%s %s: %s" % (fw.name, task, message % args))


def check_contract_functions(fw, task):
    _, module, _ = fw.built(task)  # setup() before the task module, as the worker does: MXNet
    # reads its thread settings once, when a task module first imports it
    missing = contract.missing_functions(fw.package, contract.PACKAGE_FUNCTIONS)
    missing += contract.missing_functions(module, contract.TASK_FUNCTIONS[spec.TASKS[task].kind])
    if missing:
        _fail(fw, task, "the contract's functions %s are missing", missing)


def check_parameter_count(fw, task):
    _, _, model = fw.built(task)
    count, expected = fw.package.count_parameters(model), spec.TASKS[task].param_count
    if count != expected:
        _fail(fw, task, "%d parameters, SPEC says %d", count, expected)


def check_reference_forward(fw, task, tolerance=FORWARD_TOLERANCE):
    _, module, model, params = fw.loaded_once(task)
    inputs = reference.fixed_inputs(task)
    outputs = module.predict(model, [fw.native(module, inputs)])
    error = reference.relative_error(outputs, reference.forward(task, params, inputs))
    if not error < tolerance:
        _fail(
            fw,
            task,
            "outputs differ from the NumPy reference by %.2e (tolerance %g)",
            error,
            tolerance,
        )
    return error


def check_export_round_trip(fw, task):
    _, module, model, params = fw.loaded_once(task)
    exported = slots.export_from(fw.package, module, task, model)
    if list(exported) != list(params):
        _fail(
            fw,
            task,
            "exported names %s differ from the neutral layout's",
            [n for n in exported if n not in params][:5],
        )
    changed = [k for k in params if not np.array_equal(exported[k], params[k])]
    if changed:
        _fail(fw, task, "exported weights differ from the loaded ones: %s", changed[:5])


def check_training_steps(fw, task, steps=None, tolerance=TRAIN_TOLERANCE):
    """N optimiser steps from the neutral weights: the losses before each step, then the
    weights after the last, against the NumPy reference's. A wrong optimiser can keep the
    losses of a few steps within tolerance and still move the weights wrongly."""
    steps = steps or TRAIN_STEPS_OF.get(task, TRAIN_STEPS)
    run, module, model, params = fw.loaded(task)
    batches = reference_train.fixed_batches(task, steps, batch_size=TRAIN_BATCH_SIZE)
    optimizer = dict(run["task"]["optimizer"])
    if optimizer["name"] == "adam":  # the reference in the framework's form of Adam
        optimizer["epsilon_form"] = fw.declared.get("adam_epsilon", "corrected")
    expected, trained = reference_cache.trained(task, params, batches, optimizer)
    losses = [float(module.train_epoch(model, [(fw.native(module, x), y)])) for x, y in batches]
    error = float(np.max(np.abs(np.array(losses) - expected) / np.abs(expected)))
    if not error < tolerance:
        _fail(
            fw,
            task,
            "losses %s differ from the reference's %s by %.2e (tolerance %g)",
            np.round(losses, 5).tolist(),
            np.round(expected, 5).tolist(),
            error,
            tolerance,
        )
    if losses[-1] == losses[0]:
        _fail(fw, task, "the loss did not change in %d steps", steps)
    exported = slots.export_from(fw.package, module, task, model)
    measure, weight_tolerance = WEIGHT_CHECK_OF.get(task, ("largest", WEIGHT_TOLERANCE))
    weight_tolerance = (fw.declared.get("trained_weights_tolerance") or {}).get(
        task, weight_tolerance
    )  # declared, with its measurement, in the framework's YAML
    errors = trained_weight_errors(params, trained, exported, measure)
    worst = max(errors, key=errors.get)
    if not errors[worst] < weight_tolerance:
        _fail(
            fw,
            task,
            "after %d steps %s differs from the reference's by %.2e of the steps' "
            "own size (tolerance %g; %s)",
            steps,
            worst,
            errors[worst],
            weight_tolerance,
            ", ".join(
                "%s %.1e" % (n, e) for n, e in sorted(errors.items(), key=lambda ne: -ne[1])[:3]
            ),
        )
    return error, errors[worst]


def trained_weight_errors(initial, expected, got, measure="largest"):
    """{name: error} per trained tensor: |(got - initial) - (expected - initial)| over
    |expected - initial| (absolute where the steps left the tensor unchanged), |x| the largest
    element's magnitude, or with measure="norm" the Euclidean norm."""
    size = np.linalg.norm if measure == "norm" else (lambda x: np.max(np.abs(x)))
    errors = {}
    for name, want in expected.items():
        start = np.asarray(initial[name], np.float64)
        change = np.asarray(want, np.float64) - start
        miss = size(np.asarray(got[name], np.float64) - start - change)
        scale = size(change)
        errors[name] = float(miss / scale if scale > 0 else miss)
    return errors


def _expect_refusal(fw, task, what, load):
    try:
        load()
    except ValueError:
        return
    _fail(fw, task, "loading weights with %s was accepted", what)


class _Hiding(slots.Tensors):
    """The model's tensors with one more or one fewer: what a wrong converter would see."""

    def __init__(self, tensors, drop=None, extra=None):
        self.tensors, self.drop, self.extra = tensors, drop, extra

    def keys(self):
        keys = [k for k in self.tensors.keys() if k != self.drop]
        return keys + ([self.extra] if self.extra else [])

    def read(self, key):
        return self.tensors.read(key)

    def write(self, key, value):
        self.tensors.write(key, value)

    def commit(self):
        self.tensors.commit()


def check_weight_protocol(fw, task):
    """The framework's slots and tensors fit each other exactly, and the runtime's
    completeness check refuses a converter that skips, reuses or invents a tensor."""
    _, module, model = fw.build(task, dropout=False)
    params = weights.random_weights(task, seed=0)
    table, tensors = module.slots(model), fw.package.tensors(model)
    native = tensors.keys()
    if len(set(native)) != len(native):
        _fail(fw, task, "tensors(model) lists a key twice")
    native_size = sum(int(np.asarray(tensors.read(k)).size) for k in native)
    neutral_size = sum(int(np.prod(s)) for s in weights.layout(task).values())
    if native_size != neutral_size:
        _fail(
            fw,
            task,
            "tensors(model) holds %d values, the neutral weights %d: it lists too %s tensors",
            native_size,
            neutral_size,
            "many" if native_size > neutral_size else "few",
        )
    slots.load_weights(task, table, tensors, params)  # the real thing passes
    names = list(table)
    first, second = names[0], names[-1]
    reused = dict(table)
    reused[first] = table[second] if table[second].keys != table[first].keys else table[names[1]]
    _expect_refusal(
        fw,
        task,
        "one tensor's slot pointing at another's",
        lambda: slots.load_weights(task, reused, tensors, params),
    )
    skipped = dict(table)
    del skipped[first]
    _expect_refusal(
        fw,
        task,
        "a neutral tensor without a slot",
        lambda: slots.load_weights(task, skipped, tensors, params),
    )
    _expect_refusal(
        fw,
        task,
        "a native tensor left unfilled",
        lambda: slots.load_weights(task, table, _Hiding(tensors, extra="extra"), params),
    )
    _expect_refusal(
        fw,
        task,
        "a slot naming a tensor the model lacks",
        lambda: slots.load_weights(task, table, _Hiding(tensors, drop=native[0]), params),
    )


def _uniform_within(fw, task, name, values, limit):
    """Drawn from uniform(-limit, limit): inside it, and (thousands of draws) reaching near it."""
    top = float(np.abs(values).max())
    if top > limit * (1 + 1e-5) or top < 0.8 * limit:
        _fail(
            fw,
            task,
            "%s: max |w| %.4g, SPEC's uniform initialiser has limit %.4g",
            name,
            top,
            limit,
        )


def check_native_initialisers(fw, task):
    """The framework's own initial weights (init=native) follow SPEC's rules: glorot-uniform
    kernels (the fan over a convolution's receptive field) and zero biases; for the GRU per
    gate -- glorot-uniform input blocks, orthogonal recurrent blocks -- and the embedding
    uniform(-0.05, 0.05); DenseNet-121 He-normal convolutions (fan-in), batch norm gamma 1,
    beta 0, mean 0, var 1. ResNet-50 (inference, any weights) is not checked."""
    if task == "resnet50":
        return
    _, module, model = fw.built(task)
    params = slots.export_from(fw.package, module, task, model)
    for name, value in params.items():
        value = np.asarray(value, np.float64)
        field = name.rsplit(".", 1)[-1]
        if field in weights.BN_FIELDS:
            expected = 1.0 if field in ("gamma", "var") else 0.0
            if not np.all(value == expected):
                _fail(fw, task, "%s is not %g at initialisation", name, expected)
        elif value.ndim == 4 and task == "densenet":  # He-normal over the fan-in
            std = np.sqrt(2.0 / np.prod(value.shape[1:]))
            if value.size > 1000 and not (
                abs(value.std() / std - 1) < 0.1 and abs(value.mean()) < 0.1 * std
            ):
                _fail(
                    fw,
                    task,
                    "%s: std %.3g, mean %.2g; He-normal (fan-in) has std %.3g",
                    name,
                    value.std(),
                    value.mean(),
                    std,
                )
        elif name.endswith("bias"):
            if np.any(value):
                _fail(fw, task, "%s is not zero at initialisation", name)
        elif name == "embedding.weight":
            _uniform_within(fw, task, name, value, spec.RNN.embedding_init_range)
        elif name.startswith("gru."):
            for gate, block in enumerate(np.split(value, 3, axis=1)):
                label = "%s gate %d" % (name, gate)
                if name == "gru.recurrent_weight":
                    error = np.abs(block.T.dot(block) - np.eye(block.shape[1])).max()
                    if error > 1e-4:
                        _fail(fw, task, "%s is not orthogonal (|B'B - I| = %.2g)", label, error)
                else:
                    _uniform_within(
                        fw, task, label, block, np.sqrt(6.0 / (block.shape[0] + block.shape[1]))
                    )
        elif value.ndim == 4:  # (out, in, kh, kw)
            receptive = value.shape[2] * value.shape[3]
            _uniform_within(
                fw,
                task,
                name,
                value,
                np.sqrt(6.0 / ((value.shape[0] + value.shape[1]) * receptive)),
            )
        else:  # dense (in, out)
            _uniform_within(fw, task, name, value, np.sqrt(6.0 / sum(value.shape)))


def check_deterministic_prediction(fw, task):
    """Inference mode: dropout off, batch norm on running statistics."""
    _, module, model = fw.built(task)
    inputs = fw.native(module, reference.fixed_inputs(task))
    a, b = module.predict(model, [inputs]), module.predict(model, [inputs])
    if not np.array_equal(a, b):
        _fail(fw, task, "two predictions of the same batch differ (dropout left on?)")
    if not np.isfinite(a).all():
        _fail(fw, task, "non-finite outputs")


def check_precision(fw, task, precision, tolerances):
    """A precision the framework declares on the CPU, other than fp32, from the neutral weights
    against the float64 reference, within that precision's tolerances (`tolerances`:
    conf/precision/<precision>.yaml as plain data): a mixed precision by its output error, a
    quantized one (int8) by its agreement after calibration (bench_shared.calibration).
    Returns the error, or the agreement."""
    size = {"image_size": PRECISION_IMAGE_SIZE} if task == "densenet" else {}
    try:
        run, module, model = fw.build(task, dropout=False, precision=precision, **size)
    except NotImplementedError as exc:  # the package's setup, for a fact found at run time
        raise NotOnThisMachine(str(exc)) from exc
    params = weights.random_weights(task, seed=0)
    slots.load_into(fw.package, module, task, model, params)
    if precision not in contract.QUANTIZED:
        inputs = reference.fixed_inputs(task, image_size=size.get("image_size"))
        outputs = module.predict(model, [fw.native(module, inputs)])
        error = reference.relative_error(outputs, reference.forward(task, params, inputs))
        if not error <= tolerances["output_tolerance"]:  # NaN fails too
            _fail(
                fw,
                task,
                "precision=%s: outputs differ from the NumPy reference by %.2e (tolerance %g)",
                precision,
                error,
                tolerances["output_tolerance"],
            )
        return error
    images = [fw.native(module, reference.distinct_images(CALIBRATION_IMAGES, seed=2))]
    model = calibration.calibrate(run, module, model, images, Stopwatch(fw.package.sync))
    inputs = reference.distinct_images(AGREEMENT_IMAGES, seed=1)
    outputs = module.predict(model, [fw.native(module, inputs)])
    agreement = calibration.feature_agreement(outputs, reference.forward(task, params, inputs))
    problems = calibration.within(agreement, tolerances["agreement"])
    if problems:
        _fail(
            fw, task, "precision=%s against the NumPy reference: %s", precision, "; ".join(problems)
        )
    return agreement


CHECKS = {
    "contract_functions": check_contract_functions,
    "parameter_count": check_parameter_count,
    "reference_forward": check_reference_forward,
    "export_round_trip": check_export_round_trip,
    "training_steps": check_training_steps,
    "weight_protocol": check_weight_protocol,
    "deterministic_prediction": check_deterministic_prediction,
    "native_initialisers": check_native_initialisers,
}
TRAINING_ONLY = ("training_steps",)
