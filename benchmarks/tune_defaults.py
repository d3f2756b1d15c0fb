"""Default vs tuned, every framework x task, on this machine: is each default within 10 % of
the fastest setting `python -m bench tune` found here?

    python benchmarks/tune_defaults.py [--frameworks torch,keras] [--tasks cnn,rnn]
        [--rounds 3] [--preset smoke] [--precision fp32] [--tune-missing] [--no-confirm]
        [--override task.image_size=112 ...] [--out DIR]

With the orchestrator's interpreter (e.g. .nox/core/bin/python). For each framework x task
with a tuning profile on this host (`--tune-missing` runs `python -m bench tune` first where
there is none), it runs the benchmark through the CLI with the default settings and with
`tuned=true` in alternating rounds — default, tuned, default, tuned, ... — in one window, so
drift on the machine hits both alike, and prints the median throughput of each (training:
steady-state examples/s; inference: images/s), their ratio and what the profile changes,
under the CPU model and flags they were measured on. A timing run, not a test: run it on a
quiet machine. Writes tune_defaults.json and tune_defaults.md into --out. `--override` adds a
Hydra override to every run and tune (repeatable); at `--preset smoke` a task with a shorter
tune run (`bench.tools.tune.search.SHORT_RUN`: densenet) gets its sizes too, in the tune
and the runs alike.

Where the tune kept the default, there is nothing to confirm: the row comes from the tune's
own rounds (the default against the fastest other eligible candidate, alternating in the same
window), with no new runs. `--no-confirm` takes every row from the tune's rounds (the chosen
settings against the default, as the tune measured them) — quicker, but the fastest of several
noisy candidates tends to look a little faster than it is, which the confirming rounds undo.
"""

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.run import capabilities, profiles, sysinfo
from bench.run.config import override_key
from bench.tools.tune.candidates import label, settings_key
from bench.tools.tune.rounds import CandidateRounds
from bench.tools.tune.search import DEFAULT_PRESET, short_run
from bench_shared import contract, spec

WITHIN = 0.10  # a default more than 10 % slower than the tuned setting is flagged


def bench(*args, log):
    """`python -m bench *args`: (exit status, the last result.json or None)."""
    proc = subprocess.run([sys.executable, "-m", "bench", *args], capture_output=True, text=True)
    log.write(f"$ python -m bench {' '.join(args)}\n{proc.stdout}{proc.stderr}\n")
    log.flush()
    paths = re.findall(r"^result: (.+)$", proc.stdout, re.M)
    return proc.returncode, (json.loads(Path(paths[-1]).read_text()) if paths else None)


def throughput(result):
    stats = (result or {}).get("stats") or {}
    return stats.get("examples_per_second") or stats.get("images_per_second")


def profile_for(framework, task, precision):
    key = sysinfo.host_key("cpu")
    path = profiles.profile_path(None, key, framework, task, "cpu", precision)
    return path, (json.loads(path.read_text()) if path.is_file() else None)


def compare(framework, task, args, log):
    """One row: default vs tuned, alternating; or the reason there is none."""
    row = {"framework": framework, "task": task}
    common = [
        f"framework={framework}",
        f"task={task}",
        f"precision={args.precision}",
        f"preset={args.preset}",
        *args.override,
    ]
    if args.preset == DEFAULT_PRESET:
        common += short_run(task, {override_key(o) for o in args.override})
    reason = contract.unsupported(
        capabilities.declared(framework)["capabilities"], framework, task, "cpu", args.precision
    )
    if reason:
        row["note"] = "unsupported"
        return row
    path, profile = profile_for(framework, task, args.precision)
    if profile is None and args.tune_missing:
        print(f"  {framework} {task}: tuning ...", flush=True)
        code, _ = bench("tune", *common, "--rounds", str(args.rounds), log=log)
        path, profile = profile_for(framework, task, args.precision)
    if profile is None:
        command = profiles.tune_command(framework, task, "cpu", args.precision)
        row["note"] = f"no profile (`{command}`; see {log.name})"
        return row
    row["changed"], row["profile"] = profile["changed"], str(path)
    if profile["changed"] == "default" or args.no_confirm:
        return from_tune(row, profile)
    measured = {"default": [], "tuned": []}
    for rnd in range(args.rounds):
        for name, extra in (("default", []), ("tuned", ["tuned=true"])):
            code, result = bench(*common, *extra, log=log)
            if result is None or result["status"] != "ok":
                row["note"] = (
                    f"{name} run {(result or {}).get('status', 'failed')}: "
                    f"{(result or {}).get('error', f'see {log.name}')}"
                )
                return row
            measured[name].append(throughput(result))
            print(
                f"  {framework} {task} round {rnd + 1} {name}: {measured[name][-1]:.1f}", flush=True
            )
    row.update({name: statistics.median(values) for name, values in measured.items()})
    row["rounds"] = measured
    row["ratio"] = row["tuned"] / row["default"]
    return row


def from_tune(row, profile):
    """The row from the tune's own rounds (same window, alternating). Kept default: the default
    against the fastest other candidate `tune` could have chosen (ok in every round, accuracy
    within its drop), each as last measured beside the default (a confirming stage has the
    last word). Changed: the chosen settings against the default in the last stage that
    measured both (the confirming one)."""
    work = json.loads(Path(profile["rounds_file"]).read_text())["measurements"]
    default = profile["defaults"]
    chosen = {
        "options": {**default["options"], **profile["options"]},
        "env": {**default["env"], **profile["env"]},
    }
    target = default if profile["changed"] == "default" else chosen
    stages = {}
    for m in work:
        if m["precision"] == profile["precision"]:
            stages.setdefault(m["stage"], {}).setdefault(m["key"], []).append(m)
    default_key = settings_key(default, profile["precision"])
    target_key = settings_key(target, profile["precision"])
    bar = None  # the default's accuracy, the bar every candidate is held to
    last = {}  # other candidate -> (ratio, target's runs, its runs, stage), its latest stage
    first = None
    for stage, by_key in stages.items():
        if default_key in by_key and bar is None:
            bar = CandidateRounds(default, profile["precision"], by_key[default_key]).accuracy
        if target_key not in by_key:
            continue
        mine = CandidateRounds(target, profile["precision"], by_key[target_key])
        if not mine.ok:
            continue
        if first is None:
            first, first_stage = mine, stage
        for key, ms in by_key.items():
            other = CandidateRounds(ms[0]["settings"], profile["precision"], ms)
            if key == target_key or (profile["changed"] != "default" and key != default_key):
                continue
            last.pop(key, None)  # a later stage (the confirming one) has the last word
            if other.ok and (
                bar is None
                or other.accuracy is None
                or other.accuracy >= bar - profile["accuracy_drop"]
            ):
                last[key] = (other.throughput / mine.throughput, mine, other, stage)
    # kept: the closest challenger; changed: the default, as last measured beside the choice
    best = max(last.values(), key=lambda entry: entry[0]) if last else None
    if best is None and profile["changed"] == "default" and first is not None:
        best = (1.0, first, first, first_stage)
    if best is None:
        row["note"] = "the tune's rounds hold no comparison of the default and the profile"
        return row
    ratio, mine, other, stage = best
    if profile["changed"] == "default":
        row["fastest_other"] = label(other.settings, default) if other is not mine else None
        default_runs, tuned_runs = mine, other
    else:
        default_runs, tuned_runs = other, mine
    row["source"] = f"tune rounds, stage {stage}"
    row["default"], row["tuned"] = default_runs.throughput, tuned_runs.throughput
    row["rounds"] = {
        "default": [m["throughput"] for m in default_runs.rounds],
        "tuned": [m["throughput"] for m in tuned_runs.rounds],
    }
    row["ratio"] = row["tuned"] / row["default"]
    return row


def cell(row, name):
    """The median, and the range of the rounds where there are several: the noise in view."""
    runs = [t for t in row.get("rounds", {}).get(name, []) if t]
    if len(runs) < 2:
        return f"{row[name]:.1f}"
    return f"{row[name]:.1f} ({min(runs):.1f}-{max(runs):.1f})"


def markdown(rows, header):
    lines = [
        header,
        "",
        "| framework | task | default (range) | tuned (range) | tuned/default "
        "| profile changes "
        "| default within 10 % |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "ratio" not in r:
            lines.append(f"| {r['framework']} | {r['task']} | | | | {r.get('note', '')} | |")
            continue
        changes = r["changed"]
        if r["changed"] == "default":  # "tuned": the fastest candidate the tune turned down
            ok = "yes (tune kept it)"
            if r["ratio"] > 1 + WITHIN:  # a faster median whose rounds overlap the default's
                ok = "yes (tune kept it: the gap is within the rounds' noise)"
            changes = (
                f"none (fastest other: {r['fastest_other']})"
                if r["fastest_other"]
                else "none (no other candidate ran ok at the default's accuracy)"
            )
        else:
            ok = "yes" if r["default"] >= (1 - WITHIN) * r["tuned"] else "**no**"
        if r.get("source"):
            changes += f" [{r['source']}]"
        lines.append(
            f"| {r['framework']} | {r['task']} | {cell(r, 'default')} "
            f"| {cell(r, 'tuned')} | {r['ratio']:.2f} | {changes} | {ok} |"
        )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frameworks", default=",".join(capabilities.framework_names()))
    parser.add_argument("--tasks", default=",".join(spec.TASKS))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--preset", default="smoke")
    parser.add_argument("--precision", default="fp32")
    parser.add_argument("--tune-missing", action="store_true")
    parser.add_argument(
        "--no-confirm",
        action="store_true",
        help="every row from the tune's rounds, no confirming runs",
    )
    parser.add_argument(
        "--override",
        action="append",
        default=[],
        help="a Hydra override for every run and tune, e.g. task.image_size=112",
    )
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    out = Path(args.out or f"results/tune_defaults/{time.strftime('%Y-%m-%d_%H-%M-%S')}")
    out.mkdir(parents=True, exist_ok=True)
    key = sysinfo.host_key("cpu")
    header = (
        f"Default vs tuned on {key['cpu']} ({' '.join(key['flags']) or 'no AVX'}), "
        f"{key['cpus']} CPUs; precision {args.precision}, preset {args.preset}"
        f"{''.join(f', {o}' for o in args.override)}, "
        f"{args.rounds} alternating rounds, median throughput (training: examples/s, "
        f"inference: images/s); {time.strftime('%Y-%m-%d')}"
    )
    print(header, flush=True)
    rows = []
    with open(out / "bench.log", "w") as log:
        for framework in args.frameworks.split(","):
            for task in args.tasks.split(","):
                rows.append(compare(framework, task, args, log))
    text = markdown(rows, header)
    (out / "tune_defaults.md").write_text(text + "\n")
    (out / "tune_defaults.json").write_text(
        json.dumps({"host": key, "args": vars(args), "rows": rows}, indent=1)
    )
    print(text)
    print(f"written: {out}")


if __name__ == "__main__":
    main()
