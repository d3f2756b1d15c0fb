"""`python -m bench verify`: every framework against the NumPy reference, from one neutral text.

For each framework environment and task: the same neutral weights (bench_shared.weights) are
loaded in a worker, exported back (must be bit-identical), a fixed batch is predicted and
compared with bench_shared.reference, the parameter count is compared with SPEC, and, for the
training tasks, N optimiser steps on a fixed batch order (dropout off) give a loss trajectory
compared with bench_shared.reference_train. Adding a framework needs no change here.
"""
import argparse
import dataclasses
import json
import time
from pathlib import Path

import numpy as np

from bench_shared import reference, reference_train, spec, weights

from ..console import subcommand, text_table
from ..errors import BenchError
from ..run import benchmark, capabilities, config, environments, launch, worker_env
from . import as_flags

# Output tolerance: max |output - reference| / max |reference|. fp32 differs from the float64
# reference by summation order only (PyTorch: ~4e-7). bf16 keeps 8 mantissa bits, fp16 11;
# PyTorch's CPU autocast bf16 measured 4e-3 (ResNet-50) to 7e-3 (CNN, GRU).
OUTPUT_TOLERANCE = {"fp32": 1e-4, "fp16": 1e-2, "bf16": 3e-2}
# Training: max relative difference of the per-step losses. fp32 rounding compounds through
# the steps (CNN after 20 steps: PyTorch 3e-5, TensorFlow and Keras 6e-4; GRU: 1e-7 and 2e-4;
# PyTorch bf16: 1e-3); a convention error (momentum, loss reduction, gate order) shows at 1e-2
# and more within a few steps.
TRAIN_TOLERANCE = {"fp32": 2e-3, "fp16": 1e-2, "bf16": 1e-2}
# DenseNet-121 (fp32): 120 batch norms over batches of 16 at 64 x 64 make each step's loss
# sensitive to rounding: after 20 steps 1.7e-3 (Keras) to 3.5e-3 (Paddle), PyTorch 2.9e-3, not
# growing step by step (6e-7, 9e-5, 3e-4, ... 2.9e-3, 2e-4, ..., 1.5e-3); a convention error
# (the loss's reduction over the labels, Adam's bias correction) shows at 1e-2 and more
TASK_TRAIN_TOLERANCE = {("densenet", "fp32"): 6e-3}


def train_tolerance(task, precision):
    return TASK_TRAIN_TOLERANCE.get((task, precision), TRAIN_TOLERANCE[precision])
TRAIN_BATCH_SIZE = 16


@dataclasses.dataclass
class Check:
    framework: str
    task: str
    status: str  # "pass", "FAIL", "unsupported", "not installed", "error"
    output_error: float = None
    train_error: float = None
    param_count: int = None
    detail: str = ""


def compose_config(framework, task, precision, device):
    return config.compose([f"framework={framework}", f"task={task}",
                           f"precision={precision}", f"device={device}", "preset=smoke"])


class References:
    """Neutral weights, inputs and reference results, written and computed once per task."""

    def __init__(self, directory: Path, steps):
        self.directory, self.steps = directory, steps
        self.cache = {}  # task -> (paths, reference outputs, neutral params)
        self.trajectories = {}  # (task, optimizer) -> reference losses

    def __call__(self, task):
        if task not in self.cache:
            params = weights.random_weights(task, seed=0)
            paths = {"weights": self.directory / f"{task}_weights.npz",
                     "inputs": self.directory / f"{task}_inputs.npy"}
            weights.save(paths["weights"], task, params)
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
        python, _ = environments.find_python(cfg.framework)
    except BenchError as exc:
        return Check(framework, task, "not installed", detail=str(exc))
    paths, expected, _ = refs(task)
    run_dir = out_dir / f"{framework}_{task}"
    run = benchmark.worker_run(cfg, {"arrays": {}, "limits": {}})
    if "dropout" in run["task"]:
        run["task"]["dropout"] = False  # the reference has none: the same steps everywhere
    run["mode"] = "verify"
    run["verify"] = {"weights": str(paths["weights"]), "inputs": str(paths["inputs"]),
                     "outputs": str(run_dir / "outputs.npy"),
                     "train_steps": args.steps, "train_batch_size": TRAIN_BATCH_SIZE}
    raw = launch.run_worker(python, run, run_dir, cfg.preset.timeout_s,
                            worker_env.environment_for(cfg, python))
    if raw["status"] != "ok":
        return Check(framework, task, "unsupported" if raw["status"] == "unsupported" else "error",
                     detail=raw.get("error", ""))
    check = Check(framework, task, "pass", param_count=raw["param_count"])
    check.output_error = reference.relative_error(np.load(run_dir / "outputs.npy"), expected)
    problems = []
    if not check.output_error <= OUTPUT_TOLERANCE[args.precision]:  # NaN fails too
        problems.append(f"output error {check.output_error:.2e} > "
                        f"{OUTPUT_TOLERANCE[args.precision]:g}")
    if raw["param_count"] != spec.TASKS[task].param_count:
        problems.append(f"{raw['param_count']:,} parameters, SPEC says "
                        f"{spec.TASKS[task].param_count:,}")
    if raw["export_max_abs_diff"] != 0.0:
        problems.append(f"exported weights differ by {raw['export_max_abs_diff']:.2e}")
    if "train_losses" in raw:
        optimizer = run["task"]["optimizer"]
        expected_losses = np.array(refs.train_reference(task, optimizer))
        losses = np.array(raw["train_losses"])
        check.train_error = float(np.max(np.abs(losses - expected_losses)
                                         / np.abs(expected_losses)))
        tolerance = train_tolerance(task, args.precision)
        if not check.train_error <= tolerance:  # NaN fails too
            problems.append(f"loss trajectory differs by {check.train_error:.2e} > "
                            f"{tolerance:g}")
    if problems:
        check.status, check.detail = "FAIL", "; ".join(problems)
    return check


def cell(check):
    if check.status in ("pass", "FAIL"):
        text = f"{check.status} out {check.output_error:.1e}"
        if check.train_error is not None:
            text += f" train {check.train_error:.1e}"
        return text
    return {"unsupported": "—", "not installed": "not installed", "error": "error"}[check.status]


def matrix(checks, frameworks, tasks):
    by_key = {(c.framework, c.task): c for c in checks}
    return text_table(["framework", *tasks],
                      [[fw, *(cell(by_key[fw, t]) for t in tasks)] for fw in frameworks])


@subcommand
def main(argv):
    parser = argparse.ArgumentParser(
        prog="python -m bench verify",
        description="Every framework against the NumPy reference: the same neutral weights "
                    "loaded and exported bit-identically, a fixed batch predicted, the parameter "
                    "count, and N training steps' losses (framework=a,b and task=... work as "
                    "the flags do).",
        epilog="exit status: 0; 1 when a check fails or errs; 2 a bad command line. Frameworks "
               "not installed are reported as such, not failed.")
    parser.add_argument("--frameworks", default=",".join(capabilities.framework_names()),
                        metavar="A,B", help="comma-separated (default: every framework)")
    parser.add_argument("--tasks", default=",".join(spec.TASKS), metavar="A,B",
                        help="comma-separated (default: every task)")
    parser.add_argument("--precision", default="fp32", choices=sorted(OUTPUT_TOLERANCE))
    parser.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    parser.add_argument("--steps", type=int, default=20, help="training steps (0: none)")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="directory for weights, outputs, report")
    args = parser.parse_args(as_flags(argv, {"framework": "--frameworks", "task": "--tasks",
                                             "precision": "--precision",
                                             "device": "--device"}))
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
    out_dir.mkdir(parents=True, exist_ok=True)
    refs = References(out_dir, args.steps)
    checks = []
    for fw in frameworks:
        for task in tasks:
            checks.append(check_one(fw, task, args, refs, out_dir))
            c = checks[-1]
            print(f"{fw} {task}: {c.status}{' - ' + c.detail if c.detail else ''}", flush=True)
    print()
    print(f"precision={args.precision} device={args.device}: max relative output error "
          f"(tolerance {OUTPUT_TOLERANCE[args.precision]:g})"
          + (f", {args.steps}-step loss trajectory (tolerance "
             f"{TRAIN_TOLERANCE[args.precision]:g}; densenet "
             f"{train_tolerance('densenet', args.precision):g})" if args.steps else ""))
    print(matrix(checks, frameworks, tasks))
    (out_dir / "verify.json").write_text(json.dumps(
        [dataclasses.asdict(c) for c in checks], indent=1))
    print(f"report: {out_dir / 'verify.json'}")
    failed = [c for c in checks if c.status in ("FAIL", "error")]
    return 1 if failed else 0
