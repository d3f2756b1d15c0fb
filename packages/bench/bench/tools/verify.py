"""`python -m bench verify`: every framework against the NumPy reference, from one neutral text.

For each framework environment and task: the same neutral weights (bench_shared.weights) are
loaded in a worker, exported back (must be bit-identical), a fixed batch is predicted and
compared with bench_shared.reference, the parameter count is compared with SPEC, and, for the
training tasks, N optimiser steps on a fixed batch order (dropout off) give a loss trajectory
compared with bench_shared.reference_train. A quantized precision (int8) is calibrated on
other images first and compared by its agreement with the reference (bench_shared.calibration).
The tolerances are each precision's, in conf/precision/<precision>.yaml. Adding a framework
needs no change here.
"""

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

from bench_shared import calibration, contract, reference, reference_train, spec, weights

from .. import conf_dir, files
from ..console import subcommand, text_table
from ..errors import BenchError
from ..run import benchmark, capabilities, config, environments, launch, worker_env
from . import as_flags

TRAIN_BATCH_SIZE = 16
# a quantized precision: images whose features differ (reference.distinct_images), so that
# the read-out's top-1 can follow them; calibrated on others of the same kind
AGREEMENT_IMAGES, CALIBRATION_IMAGES = 16, 8


def train_tolerance(precision, task):
    """The loss trajectory's tolerance at a precision (conf/precision/<precision>.yaml)."""
    return precision.task_train_tolerance.get(task, precision.train_tolerance)


def precision_names():
    return sorted(p.stem for p in (conf_dir() / "precision").glob("*.yaml"))


@dataclasses.dataclass
class Check:
    framework: str
    task: str
    status: str  # "pass", "FAIL", "unsupported", "not_installed", "error"
    output_error: float = None  # a quantized precision: its feature error
    top1_agreement: float = None  # a quantized precision only
    train_error: float = None
    param_count: int = None
    detail: str = ""


def compose_config(framework, task, precision, device):
    return config.compose(
        [
            f"framework={framework}",
            f"task={task}",
            f"precision={precision}",
            f"device={device}",
            "preset=smoke",
        ]
    )


class References:
    """Neutral weights, inputs and reference results, written and computed once per task."""

    def __init__(self, directory: Path, steps, quantized=False):
        self.directory, self.steps, self.quantized = directory, steps, quantized
        self.cache = {}  # task -> (paths, reference outputs, neutral params)
        self.trajectories = {}  # (task, optimizer) -> reference losses

    def __call__(self, task):
        if task not in self.cache:
            params = weights.random_weights(task, seed=0)
            paths = {
                "weights": self.directory / f"{task}_weights.npz",
                "inputs": self.directory / f"{task}_inputs.npy",
            }
            weights.save(paths["weights"], task, params)
            if self.quantized:  # inference tasks only: ResNet-50's images
                inputs = reference.distinct_images(AGREEMENT_IMAGES, seed=1)
                paths["calibration"] = self.directory / f"{task}_calibration.npy"
                np.save(paths["calibration"], reference.distinct_images(CALIBRATION_IMAGES, seed=2))
            else:
                inputs = reference.fixed_inputs(task)
            np.save(paths["inputs"], inputs)
            outputs = reference.forward(task, params, inputs)
            self.cache[task] = (paths, outputs, params)
        return self.cache[task]

    def train_reference(self, task, optimizer):
        key = (task, json.dumps(optimizer, sort_keys=True))
        if key not in self.trajectories:
            params = self(task)[2]
            batches = reference_train.fixed_batches(task, self.steps, TRAIN_BATCH_SIZE)
            self.trajectories[key] = reference_train.train_steps(task, params, batches, optimizer)
        return self.trajectories[key]


def check_one(framework, task, args, refs, out_dir):
    try:
        cfg = compose_config(framework, task, args.precision, args.device)
        capabilities.check(cfg)
    except BenchError as exc:
        return Check(framework, task, "unsupported", detail=str(exc))
    try:
        python, _ = environments.framework_python(cfg.framework)
    except BenchError as exc:
        return Check(framework, task, "not_installed", detail=str(exc))
    paths, expected, _ = refs(task)
    run_dir = out_dir / f"{framework}_{task}"
    run = benchmark.worker_run(cfg, {"arrays": {}, "limits": {}})
    if "dropout" in run["task"]:
        run["task"]["dropout"] = False  # the reference has none: the same steps everywhere
    run["mode"] = "verify"
    run["verify"] = {
        "weights": str(paths["weights"]),
        "inputs": str(paths["inputs"]),
        "outputs": str(run_dir / "outputs.npy"),
        "train_steps": args.steps,
        "train_batch_size": TRAIN_BATCH_SIZE,
    }
    if "calibration" in paths:  # a quantized precision: the images calibrate() sees
        run["verify"]["calibration"] = str(paths["calibration"])
    raw = launch.run_worker(
        python, run, run_dir, cfg.preset.timeout_s, worker_env.environment_for(cfg, python)
    )
    if raw["status"] != "ok":
        return Check(
            framework,
            task,
            "unsupported" if raw["status"] == "unsupported" else "error",
            detail=raw.get("error", ""),
        )
    check = Check(framework, task, "pass", param_count=raw["param_count"])
    outputs, precision, problems = np.load(run_dir / "outputs.npy"), cfg.precision, []
    if precision.agreement is not None:  # quantized: its agreement with the reference
        agreement = calibration.feature_agreement(outputs, expected)
        check.output_error = agreement["feature_error"]
        check.top1_agreement = agreement["top1_agreement"]
        problems += calibration.within(agreement, dataclasses.asdict(precision.agreement))
    else:
        check.output_error = reference.relative_error(outputs, expected)
        if not check.output_error <= precision.output_tolerance:  # NaN fails too
            problems.append(
                f"output error {check.output_error:.2e} > {precision.output_tolerance:g}"
            )
    if raw["param_count"] != spec.TASKS[task].param_count:
        problems.append(
            f"{raw['param_count']:,} parameters, SPEC says {spec.TASKS[task].param_count:,}"
        )
    if raw["export_max_abs_diff"] != 0.0:
        problems.append(f"exported weights differ by {raw['export_max_abs_diff']:.2e}")
    if "train_losses" in raw:
        optimizer = run["task"]["optimizer"]
        expected_losses = np.array(refs.train_reference(task, optimizer))
        losses = np.array(raw["train_losses"])
        check.train_error = float(
            np.max(np.abs(losses - expected_losses) / np.abs(expected_losses))
        )
        tolerance = train_tolerance(precision, task)
        if not check.train_error <= tolerance:  # NaN fails too
            problems.append(f"loss trajectory differs by {check.train_error:.2e} > {tolerance:g}")
    if problems:
        check.status, check.detail = "FAIL", "; ".join(problems)
    return check


def cell(check):
    if check.status in ("pass", "FAIL") and check.top1_agreement is not None:
        return f"{check.status} features {check.output_error:.1e} top-1 {check.top1_agreement:.2f}"
    if check.status in ("pass", "FAIL"):
        text = f"{check.status} out {check.output_error:.1e}"
        if check.train_error is not None:
            text += f" train {check.train_error:.1e}"
        return text
    return {"unsupported": "—", "not_installed": "not_installed", "error": "error"}[check.status]


def matrix(checks, frameworks, tasks):
    by_key = {(c.framework, c.task): c for c in checks}
    return text_table(
        ["framework", *tasks], [[fw, *(cell(by_key[fw, t]) for t in tasks)] for fw in frameworks]
    )


def tolerance_line(precision, args):
    """What the matrix below shows, with the precision's tolerances."""
    line = f"precision={precision.name} device={args.device}: "
    if precision.agreement is not None:
        return line + (
            f"agreement with the reference after calibration: feature error "
            f"(tolerance {precision.agreement.feature_error:g}) and top-1 of a fixed "
            f"read-out (at least {precision.agreement.top1_agreement:g}), "
            f"{AGREEMENT_IMAGES} images"
        )
    line += f"max relative output error (tolerance {precision.output_tolerance:g})"
    if args.steps:
        line += (
            f", {args.steps}-step loss trajectory (tolerance "
            f"{precision.train_tolerance:g}; densenet "
            f"{train_tolerance(precision, 'densenet'):g})"
        )
    return line


@subcommand
def main(argv):
    parser = argparse.ArgumentParser(
        prog="python -m bench verify",
        description="Every framework against the NumPy reference: the same neutral weights "
        "loaded and exported bit-identically, a fixed batch predicted, the parameter "
        "count, and N training steps' losses (framework=a,b and task=... work as "
        "the flags do).",
        epilog="exit status: 0; 1 when a check fails or errs, or --out cannot be written; 2 a "
        "bad command line. Frameworks not installed are reported as such, not failed.",
    )
    parser.add_argument(
        "--frameworks",
        default=",".join(capabilities.framework_names()),
        metavar="A,B",
        help="comma-separated (default: every framework)",
    )
    parser.add_argument(
        "--tasks",
        default=",".join(spec.TASKS),
        metavar="A,B",
        help="comma-separated (default: every task)",
    )
    parser.add_argument("--precision", default="fp32", choices=precision_names())
    parser.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    parser.add_argument("--steps", type=int, default=20, help="training steps (0: none)")
    parser.add_argument(
        "--out", default=None, metavar="DIR", help="directory for weights, outputs, report"
    )
    args = parser.parse_args(
        as_flags(
            argv,
            {
                "framework": "--frameworks",
                "task": "--tasks",
                "precision": "--precision",
                "device": "--device",
            },
        )
    )
    if args.steps < 0:
        parser.error(f"--steps {args.steps}: the number of training steps, 0 (none) or more")
    frameworks, tasks = args.frameworks.split(","), args.tasks.split(",")
    unknown = sorted(set(tasks) - set(spec.TASKS))
    if unknown:
        parser.error(f"unknown task(s) {unknown}; known: {', '.join(sorted(spec.TASKS))}")
    known = capabilities.framework_names()
    unknown = sorted(set(frameworks) - set(known))
    if unknown:
        parser.error(f"unknown framework(s) {unknown}; known: {', '.join(known)}")
    # absolute: the workers start in their own run directories
    out_dir = Path(args.out or f"results/verify/{time.strftime('%Y-%m-%d_%H-%M-%S')}").absolute()
    try:
        files.check_writable(out_dir, "verify's directory", "--out DIR puts it elsewhere")
    except files.NotWritable as exc:
        print(f"verify: {exc}", file=sys.stderr)
        return 1
    out_dir.mkdir(parents=True, exist_ok=True)
    precision = config.compose([f"precision={args.precision}"]).precision
    quantized = args.precision in contract.QUANTIZED
    refs = References(out_dir, args.steps, quantized=quantized)
    checks = []
    for fw in frameworks:
        for task in tasks:
            print(f"{fw} {task}: checking ...", flush=True)  # a check takes minutes
            checks.append(check_one(fw, task, args, refs, out_dir))
            c = checks[-1]
            print(f"{fw} {task}: {c.status}{' - ' + c.detail if c.detail else ''}", flush=True)
    print()
    print(tolerance_line(precision, args))
    print(matrix(checks, frameworks, tasks))
    (out_dir / "verify.json").write_text(
        json.dumps([dataclasses.asdict(c) for c in checks], indent=1)
    )
    print(f"report: {out_dir / 'verify.json'}")
    failed = [c for c in checks if c.status in ("FAIL", "error")]
    return 1 if failed else 0
