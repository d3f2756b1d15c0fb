"""Each 2026 row beside its framework's own loop for the same model shapes, in alternating rounds
in one window: is our code as fast as the framework's own way?

    python benchmarks/own_loops.py [--only flax,keras_jax,paddle,keras] [--tasks cnn,rnn]
        [--rounds 3] [--train-examples 2048] [--epochs 3] [--out DIR]

With the orchestrator's interpreter (e.g. .nox/core/bin/python); the framework environments
must be built (`python -m bench envs`). Ours: `python -m bench framework=<fw> task=<task>
preset=smoke ...` (a worker, as a user runs it). Theirs: benchmarks/own_loops/<fw>_loop.py in
the framework's environment: the 2018 benchmark's loops (Keras_TF_CNN, Keras_TF_RNN and the
Keras ResNet-50 inference notebook on TensorFlow, Keras_CNTK_RNN on Keras 2 and CNTK,
PyTorch_RNN, Tensorflow_CNN, Chainer_CNN), Flax's NNX tutorial loop, Keras' "Simple MNIST
convnet" fit on JAX, Paddle's paddle.Model.fit and paddle.vision.models.resnet50 with
paddle.Model.predict. Both sides train on the same number of examples of the same shapes;
throughput is steady-state (training: examples/s without the first epoch; inference: images/s
after a warm-up pass). The ratio is ours over theirs: 1.0 or more, ours is at least as fast.
Each round runs every pair, ours then theirs in odd rounds and theirs then ours in even ones.
A timing run, not a test: the table names the CPU and the load average at its start and end.
Writes own_loops.json and own_loops.md into --out.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench import project_dir
from bench.run import sysinfo

HERE = Path(__file__).resolve().parent
# (our framework row, task, the environment of its own loop, the script, the variables it runs
# with: {prefix} is that environment's directory)
KERAS_TF = {"KERAS_BACKEND": "tensorflow"}
KERAS_CNTK = {
    "KERAS_BACKEND": "cntk",
    "KERAS_HOME": "{prefix}/etc/keras2",
    "LD_LIBRARY_PATH": "{prefix}/lib/bench-mpi-shim",
}  # as keras_cntk's workers
PAIRS = [
    ("flax", "cnn", "flax", "flax_loop.py", {}),
    ("keras_jax", "cnn", "keras_jax", "keras_loop.py", {"KERAS_BACKEND": "jax"}),
    ("keras_jax", "rnn", "keras_jax", "keras_loop.py", {"KERAS_BACKEND": "jax"}),
    ("keras", "cnn", "tensorflow", "keras_loop.py", KERAS_TF),  # the 2018 Keras_TF_CNN loop
    ("keras", "rnn", "tensorflow", "keras_loop.py", KERAS_TF),  # the 2018 Keras_TF_RNN loop
    ("keras", "resnet50", "tensorflow", "keras_loop.py", KERAS_TF),  # 2018 Keras inference
    ("keras_cntk", "rnn", "cntk", "keras2_loop.py", KERAS_CNTK),  # 2018 Keras_CNTK_RNN
    ("torch", "rnn", "torch", "torch_loop.py", {}),  # the 2018 PyTorch_RNN loop
    ("tensorflow", "cnn", "tensorflow", "tensorflow_loop.py", {}),  # 2018 Tensorflow_CNN
    ("chainer", "cnn", "chainer", "chainer_loop.py", {}),  # the 2018 Chainer_CNN loop
    ("paddle", "cnn", "paddle", "paddle_loop.py", {}),
    ("paddle", "resnet50", "paddle", "paddle_loop.py", {}),
]
RESNET_BATCH, RESNET_BATCHES = 32, 2


def ours(framework, task, args, out):
    """Our row through the CLI: its steady-state throughput."""
    sizes = (
        [f"task.batch_size={RESNET_BATCH}", f"preset.inference_batches={RESNET_BATCHES}"]
        if task == "resnet50"
        else [f"preset.train_examples={args.train_examples}", f"preset.epochs={args.epochs}"]
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            f"framework={framework}",
            f"task={task}",
            "preset=smoke",
            *sizes,
            f"hydra.run.dir={out / 'runs' / f'{framework}-{task}-{time.time()}'}",
        ],
        capture_output=True,
        text=True,
        timeout=3600,
    )
    result_line = [line for line in proc.stdout.splitlines() if line.startswith("result: ")]
    result = json.loads(Path(result_line[-1][8:]).read_text()) if result_line else {}
    stats = result.get("stats") or {}
    if result.get("status") != "ok":
        raise RuntimeError(f"{framework} {task}: {result.get('error') or proc.stderr[-500:]}")
    return stats["examples_per_second" if task != "resnet50" else "images_per_second"]


def theirs(environment, script, variables, task, args):
    """The framework's own loop in its environment: its steady-state throughput."""
    prefix = project_dir() / ".nox" / environment
    python = prefix / "bin" / "python"
    env = dict(os.environ, **{k: v.replace("{prefix}", str(prefix)) for k, v in variables.items()})
    sizes = (
        ["--examples", str(RESNET_BATCH * RESNET_BATCHES), "--batch-size", str(RESNET_BATCH)]
        if task == "resnet50"
        else ["--examples", str(args.train_examples), "--epochs", str(args.epochs)]
    )
    proc = subprocess.run(
        [str(python), str(HERE / "own_loops" / script), "--task", task, *sizes],
        capture_output=True,
        text=True,
        timeout=3600,
        env=env,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{script} {task}: {proc.stderr[-500:]}")
    found = json.loads(lines[-1])
    if task == "resnet50":
        return found["images"] / found["inference_seconds"]
    return found["examples_per_epoch"] / statistics.median(found["epoch_seconds"][1:])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=None, help="comma-separated framework rows")
    parser.add_argument("--tasks", default=None, help="comma-separated tasks")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--train-examples", type=int, default=2048)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--out", default="results/own_loops")
    args = parser.parse_args()
    out = Path(args.out).absolute()
    out.mkdir(parents=True, exist_ok=True)
    pairs = [
        p
        for p in PAIRS
        if (not args.only or p[0] in args.only.split(","))
        and (not args.tasks or p[1] in args.tasks.split(","))
    ]
    load = [os.getloadavg()]
    measured = {(fw, task): {"ours": [], "theirs": []} for fw, task, *_ in pairs}
    for rnd in range(args.rounds):
        for fw, task, environment, script, variables in pairs:
            sides = ["ours", "theirs"] if rnd % 2 == 0 else ["theirs", "ours"]  # alternate
            for side in sides:
                value = (
                    ours(fw, task, args, out)
                    if side == "ours"
                    else theirs(environment, script, variables, task, args)
                )
                measured[fw, task][side].append(value)
                print(f"round {rnd + 1}: {fw} {task} {side}: {value:.1f}", flush=True)
    load.append(os.getloadavg())
    host = sysinfo.host_slug(sysinfo.host_key())
    rows = []
    for (fw, task), values in measured.items():
        a, b = statistics.median(values["ours"]), statistics.median(values["theirs"])
        rows.append(
            {
                "framework": fw,
                "task": task,
                "ours": values["ours"],
                "theirs": values["theirs"],
                "ratio": a / b,
                "ratio_range": [
                    min(values["ours"]) / max(values["theirs"]),
                    max(values["ours"]) / min(values["theirs"]),
                ],
            }
        )
    unit = "examples/s (training, steady state) or images/s (resnet50)"
    loads = " and ".join("/".join(f"{x:.1f}" for x in one) for one in load)
    lines = [
        f"Ours against the framework's own loop on {host} ({sysinfo.cpu_model()}), "
        f"{args.rounds} alternating rounds, {unit}; ratio = ours / theirs (medians; "
        f"range from the rounds' extremes). Load average (1/5/15 min) at the start and "
        f"the end: {loads}.",
        "",
        "| framework | task | ours | theirs | ratio |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['framework']} | {r['task']} | {statistics.median(r['ours']):.1f} "
            f"| {statistics.median(r['theirs']):.1f} | {r['ratio']:.2f} "
            f"({r['ratio_range'][0]:.2f}–{r['ratio_range'][1]:.2f}) |"
        )
    (out / "own_loops.md").write_text("\n".join(lines) + "\n")
    (out / "own_loops.json").write_text(
        json.dumps({"host": host, "load": load, "rows": rows}, indent=1)
    )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
