"""Every configuration of the 2026 rows, the R rows beside the frameworks they drive, and the
2018 benchmark's Keras 2 and Theano rows beside CNTK's own, next to PyTorch's default, measured
in alternating rounds in one window on this machine.

    python benchmarks/beside_torch.py [--tasks cnn,rnn,resnet50] [--only flax,paddle]
        [--rounds 2] [--train-examples 1024] [--epochs 2] [--out DIR]

With the orchestrator's interpreter (e.g. .nox/core/bin/python). Each round runs every
configuration once, through the CLI (`python -m bench ...`, a fresh worker each time), in the
same order, so that drift on a shared machine hits all alike; the table gives the median
throughput of each (training: steady-state examples/s, i.e. without the first epoch;
inference: images/s), its ratio to torch's default for the same task, and the test accuracy
of the last round (the learnable synthetic data), under the CPU model it was measured on.
A timing run, not a test: run it on a quiet machine. Writes beside_torch.json and
beside_torch.md into --out.
"""

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.run import sysinfo

# (framework, overrides beyond the default, tasks it applies to); the first of each
# framework is its default. Each option is one a package README describes.
CONFIGURATIONS = [
    ("torch", [], ("cnn", "rnn", "resnet50")),
    ("flax", [], ("cnn", "rnn", "resnet50")),
    ("flax", ["framework.options.whole_epoch=true"], ("cnn", "rnn")),
    ("flax", ["precision=bf16"], ("cnn", "rnn", "resnet50")),
    ("flax", ["framework.options.xla_flags='--xla_cpu_use_onednn=true'"], ("resnet50",)),
    ("keras_jax", [], ("cnn", "rnn", "resnet50")),
    ("keras_jax", ["framework.options.jit_compile=false"], ("resnet50",)),
    ("keras_torch", [], ("cnn", "rnn", "resnet50")),
    ("keras", [], ("cnn", "rnn", "resnet50")),
    ("paddle", [], ("cnn", "rnn", "resnet50")),
    ("paddle", ["framework.options.to_static=true"], ("cnn", "rnn")),
    ("paddle", ["framework.options.data_format=NHWC"], ("cnn",)),
    # the R rows beside the same framework driven from Python: the R layer's overhead
    ("gluon", [], ("cnn", "rnn")),
    ("r_mxnet", [], ("cnn", "rnn")),
    ("r_keras", [], ("cnn", "rnn")),
    # the 2018 Keras 2 and Theano rows: Keras 2 beside CNTK's own API; Theano through Keras 2
    # and Lasagne, each with Theano's OpenMP switch (compiled graphs are cached in the
    # environment: a round's first run of a task may include a compile, never its timed epochs)
    ("cntk", [], ("cnn", "rnn", "resnet50")),
    ("keras_cntk", [], ("cnn", "rnn", "resnet50")),
    ("keras_theano", [], ("cnn", "rnn", "resnet50")),
    ("keras_theano", ["framework.options.openmp=false"], ("cnn", "resnet50")),
    ("lasagne", [], ("cnn", "rnn", "resnet50")),
    ("lasagne", ["framework.options.openmp=false"], ("cnn", "resnet50")),
    ("onnxruntime", [], ("resnet50",)),
    ("onnxruntime", ["framework.options.graph_optimization=basic"], ("resnet50",)),
    (
        "onnxruntime",
        ["framework.options.execution_mode=parallel", "framework.options.interop_threads=2"],
        ("resnet50",),
    ),
    ("onnxruntime", ["framework.options.denormal_as_zero=false"], ("resnet50",)),
]


def bench(args, log):
    """`python -m bench *args`: the result.json it wrote, or None."""
    proc = subprocess.run([sys.executable, "-m", "bench", *args], capture_output=True, text=True)
    log.write(f"$ python -m bench {' '.join(args)}\n{proc.stdout}{proc.stderr}\n")
    log.flush()
    paths = re.findall(r"^result: (.+)$", proc.stdout, re.M)
    return json.loads(Path(paths[-1]).read_text()) if paths else None


def throughput(result):
    stats = (result or {}).get("stats") or {}
    return stats.get("examples_per_second") or stats.get("images_per_second")


def runs(args):
    """The (name, task, command-line) of every measurement, in the order of a round."""
    only = set(args.only.split(",")) if args.only else None
    for task in args.tasks.split(","):
        sizes = (
            ["preset.inference_batches=3"]
            if task == "resnet50"
            else [f"preset.train_examples={args.train_examples}", f"preset.epochs={args.epochs}"]
        )
        for framework, extra, tasks in CONFIGURATIONS:
            if task in tasks and (only is None or framework in only or framework == "torch"):
                name = " ".join([framework, *extra])
                yield (
                    name,
                    task,
                    [f"framework={framework}", f"task={task}", "preset=smoke", *sizes, *extra],
                )


def markdown(rows, header):
    lines = [
        header,
        "",
        "| task | configuration | median | runs | ratio to torch | accuracy |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        if "median" not in row:
            lines.append(f"| {row['task']} | {row['name']} | {row['note']} | | | |")
            continue
        runs_text = ", ".join(f"{v:.1f}" for v in row["runs"])
        accuracy = "" if row.get("accuracy") is None else f"{row['accuracy']:.3f}"
        lines.append(
            f"| {row['task']} | {row['name']} | {row['median']:.1f} | {runs_text} "
            f"| {row.get('ratio', float('nan')):.2f} | {accuracy} |"
        )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="cnn,rnn,resnet50")
    parser.add_argument("--only", default=None, help="frameworks (torch is always measured)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--train-examples", type=int, default=1024)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    out = Path(args.out or f"results/beside_torch/{time.strftime('%Y-%m-%d_%H-%M-%S')}")
    out.mkdir(parents=True, exist_ok=True)
    key = sysinfo.host_key("cpu")
    header = (
        f"Beside torch on {key['cpu']} ({' '.join(key['flags']) or 'no AVX'}), "
        f"{key['cpus']} CPUs; {args.rounds} alternating rounds, median throughput "
        f"(training: steady-state examples/s, {args.train_examples} examples x "
        f"{args.epochs} epochs; inference: images/s); {time.strftime('%Y-%m-%d %H:%M')}"
    )
    print(header, flush=True)
    plan = list(runs(args))
    rows = {(name, task): {"name": name, "task": task, "runs": []} for name, task, _ in plan}
    with open(out / "bench.log", "w") as log:
        for rnd in range(args.rounds):
            for name, task, command in plan:
                row = rows[name, task]
                if "note" in row:
                    continue  # failed in an earlier round
                result = bench(command, log)
                if result is None or result["status"] != "ok":
                    row["note"] = (
                        f"{(result or {}).get('status', 'failed')}: "
                        f"{(result or {}).get('error', f'see {log.name}')}"[:200]
                    )
                    print(f"  {task} {name}: {row['note']}", flush=True)
                    continue
                row["runs"].append(throughput(result))
                row["accuracy"] = result.get("accuracy")
                print(f"  round {rnd + 1} {task} {name}: {row['runs'][-1]:.1f}", flush=True)
            text = write(out, header, key, args, rows)  # after every round: Ctrl-C keeps them
    print(text)
    print(f"written: {out}")


def write(out, header, key, args, rows):
    for row in rows.values():
        if row["runs"] and "note" not in row:
            row["median"] = statistics.median(row["runs"])
    for row in rows.values():
        torch = rows.get(("torch", row["task"]), {}).get("median")
        if torch and "median" in row:
            row["ratio"] = row["median"] / torch
    text = markdown(list(rows.values()), header)
    (out / "beside_torch.md").write_text(text + "\n")
    (out / "beside_torch.json").write_text(
        json.dumps({"host": key, "args": vars(args), "rows": list(rows.values())}, indent=1)
    )
    return text


if __name__ == "__main__":
    main()
