"""What the harness costs around the work it times, on this host:

    python benchmarks/run_costs.py                     # every installed row, preset=smoke
    python benchmarks/run_costs.py --rounds 5 --tasks cnn --frameworks torch,gluon

1. The orchestrator's own commands, each the median of --rounds (interleaved): `--help`, a
   refused config (`task=cnnn`), `run --cfg job`, and a whole smoke run of the tests' NumPy
   stand-in framework (packages/bench/tests/fake_framework, through a copy of conf/), end to
   end from the shell's side.
2. Every installed framework row x task at --preset: --rounds rounds, each in a fresh random
   order, and from the results' `phases` (bench.run.phases) each row's median wall time a run,
   the share spent in timed windows, and the phases that cost most; the orchestrator's part
   (start, checks, prepare, canary, record) apart from the worker's.

Nothing else may run on the machine meanwhile. Results go to results/sweeps/run-costs-* (give
--redo to measure again).
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FAKE = ROOT / "packages" / "bench" / "tests" / "fake_framework"
ORCHESTRATOR = ("start", "checks", "prepare", "canary", "record")


def timed(command, env=None, cwd=None):
    started = time.monotonic()
    subprocess.run(command, env=env, cwd=cwd, capture_output=True)
    return time.monotonic() - started


def commands(rounds):
    """{what: [seconds]} of the orchestrator's own commands, interleaved over rounds."""
    bench = [sys.executable, "-m", "bench"]
    with tempfile.TemporaryDirectory() as tmp:
        conf = Path(tmp) / "conf"
        shutil.copytree(ROOT / "conf", conf)
        shutil.copy(FAKE / "fake.yaml", conf / "framework" / "fake.yaml")
        env = dict(
            os.environ,
            BENCH_CONF_DIR=str(conf),
            PYTHONPATH=os.pathsep.join(filter(None, [str(FAKE), os.environ.get("PYTHONPATH")])),
        )
        cases = {
            "--help": bench + ["--help"],
            "a refused config (task=cnnn)": bench + ["task=cnnn"],
            "run --cfg job": bench + ["run", "--cfg", "job", "task=rnn"],
            "the stand-in's smoke run": bench + ["framework=fake", "task=cnn", "preset=smoke"],
        }
        found = {name: [] for name in cases}
        for r in range(rounds):
            order = list(cases)
            random.Random(r).shuffle(order)
            for name in order:
                extra = [f"hydra.run.dir={tmp}/run{r}"] if "smoke" in name else []
                found[name].append(timed(cases[name] + extra, env=env, cwd=tmp))
    return found


def installed():
    done = subprocess.run(
        [sys.executable, "-m", "bench", "envs", "--json"], capture_output=True, text=True
    )
    rows = json.loads(done.stdout)["frameworks"]
    return [r["framework"] for r in rows if r.get("built")]


def rows_phases(frameworks, tasks, preset, rounds, redo):
    sweep = f"run-costs-{preset}"
    command = [
        sys.executable,
        "-m",
        "bench",
        "-m",
        f"framework={','.join(frameworks)}",
        f"task={','.join(tasks)}",
        f"preset={preset}",
        f"rounds.repeats={rounds}",
        f"sweep={sweep}",
        *(["redo=true"] if redo else []),
    ]
    started = time.monotonic()
    subprocess.run(command, cwd=ROOT)
    wall = time.monotonic() - started
    found = {}
    for path in (ROOT / "results" / "sweeps" / sweep).glob("*/result.json"):
        result = json.loads(path.read_text())
        if result.get("status") == "ok" and result.get("phases"):
            key = (result["config"]["framework"]["name"], result["config"]["task"]["name"])
            found.setdefault(key, []).append(result["phases"])
    return found, wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--preset", default="smoke")
    parser.add_argument("--tasks", default="cnn,rnn,resnet50")
    parser.add_argument("--frameworks", default=None, help="default: every installed row")
    parser.add_argument("--redo", action="store_true")
    args = parser.parse_args()
    print("The orchestrator's own commands (median of", args.rounds, "interleaved rounds):\n")
    print("| command | seconds |\n|---|---|")
    for name, values in commands(args.rounds).items():
        print(f"| {name} | {statistics.median(values):.2f} |")
    frameworks = args.frameworks.split(",") if args.frameworks else installed()
    found, wall = rows_phases(
        frameworks, args.tasks.split(","), args.preset, args.rounds, args.redo
    )
    walls = {k: [sum(p.values()) for p in v] for k, v in found.items()}
    timed_all = sum(p.get("timed", 0.0) for v in found.values() for p in v)
    print(
        f"\nEvery row at preset={args.preset}, {args.rounds} rounds ({wall / 60:.1f} min of "
        f"sweep; {timed_all / max(1e-9, sum(map(sum, walls.values()))):.0%} of the runs' wall "
        f"time in timed windows):\n"
    )
    print("| framework | task | wall a run | timed | orchestrator | largest phases |")
    print("|---|---|---|---|---|---|")
    for (framework, task), runs in sorted(found.items()):
        median_wall = statistics.median(walls[(framework, task)])
        timed = statistics.median(p.get("timed", 0.0) for p in runs)
        own = statistics.median(sum(p.get(k, 0.0) for k in ORCHESTRATOR) for p in runs)
        names = {k for p in runs for k in p if k != "timed"}
        largest = sorted(
            ((n, statistics.median(p.get(n, 0.0) for p in runs)) for n in names),
            key=lambda ns: ns[1],
            reverse=True,
        )[:3]
        print(
            f"| {framework} | {task} | {median_wall:.2f} s | {timed / median_wall:.0%} | "
            f"{own:.2f} s | " + "; ".join(f"{n} {s:.2f} s" for n, s in largest) + " |"
        )


if __name__ == "__main__":
    main()
