"""Default vs tuned, every framework x task, on this machine: is each default within 10 % of
the fastest setting `python -m bench tune` found here?

    python benchmarks/tune_defaults.py [--frameworks torch,keras] [--tasks cnn,rnn]
        [--rounds 3] [--preset smoke] [--precision fp32] [--tune-missing] [--out DIR]

With the orchestrator's interpreter (e.g. .nox/core/bin/python). For each framework x task
with a tuning profile on this host (`--tune-missing` runs `python -m bench tune` first where
there is none), it runs the benchmark through the CLI with the default settings and with
`tuned=true` in alternating rounds — default, tuned, default, tuned, ... — in one window, so
drift on the machine hits both alike, and prints the median throughput of each (training:
steady-state examples/s; inference: images/s), their ratio and what the profile changes,
under the CPU model and flags they were measured on. A timing run, not a test: run it on a
quiet machine. Writes tune_defaults.json and tune_defaults.md into --out.
"""
import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench import capabilities, profiles, sysinfo
from bench_shared import contract, spec

WITHIN = 0.10  # a default more than 10 % slower than the tuned setting is flagged


def bench(*args, log):
    """`python -m bench *args`: (exit status, the last result.json or None)."""
    proc = subprocess.run([sys.executable, "-m", "bench", *args], capture_output=True,
                          text=True)
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
    common = [f"framework={framework}", f"task={task}", f"precision={args.precision}",
              f"preset={args.preset}"]
    reason = contract.unsupported(capabilities.declared(framework)["capabilities"], framework,
                                  task, "cpu", args.precision)
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
    measured = {"default": [], "tuned": []}
    for rnd in range(args.rounds):
        for name, extra in (("default", []), ("tuned", ["tuned=true"])):
            code, result = bench(*common, *extra, log=log)
            if result is None or result["status"] != "ok":
                row["note"] = (f"{name} run {(result or {}).get('status', 'failed')}: "
                               f"{(result or {}).get('error', f'see {log.name}')}")
                return row
            measured[name].append(throughput(result))
            print(f"  {framework} {task} round {rnd + 1} {name}: {measured[name][-1]:.1f}",
                  flush=True)
    row.update({name: statistics.median(values) for name, values in measured.items()})
    row["rounds"] = measured
    row["ratio"] = row["tuned"] / row["default"]
    return row


def markdown(rows, header):
    lines = [header, "", "| framework | task | default | tuned | tuned/default | profile changes "
             "| default within 10 % |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        if "ratio" not in r:
            lines.append(f"| {r['framework']} | {r['task']} | | | | {r.get('note', '')} | |")
            continue
        if r["changed"] == "default":  # the same settings twice: only the noise differs
            ok = "yes (tune kept it)"
        else:
            ok = "yes" if r["default"] >= (1 - WITHIN) * r["tuned"] else "**no**"
        lines.append(f"| {r['framework']} | {r['task']} | {r['default']:.1f} | {r['tuned']:.1f} "
                     f"| {r['ratio']:.2f} | {r['changed']} | {ok} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frameworks", default=",".join(capabilities.framework_names()))
    parser.add_argument("--tasks", default=",".join(spec.TASKS))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--preset", default="smoke")
    parser.add_argument("--precision", default="fp32")
    parser.add_argument("--tune-missing", action="store_true")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    out = Path(args.out or f"results/tune_defaults/{time.strftime('%Y-%m-%d_%H-%M-%S')}")
    out.mkdir(parents=True, exist_ok=True)
    key = sysinfo.host_key("cpu")
    header = (f"Default vs tuned on {key['cpu']} ({' '.join(key['flags']) or 'no AVX'}), "
              f"{key['cpus']} CPUs; precision {args.precision}, preset {args.preset}, "
              f"{args.rounds} alternating rounds, median throughput (training: examples/s, "
              f"inference: images/s); {time.strftime('%Y-%m-%d')}")
    print(header, flush=True)
    rows = []
    with open(out / "bench.log", "w") as log:
        for framework in args.frameworks.split(","):
            for task in args.tasks.split(","):
                rows.append(compare(framework, task, args, log))
    text = markdown(rows, header)
    (out / "tune_defaults.md").write_text(text + "\n")
    (out / "tune_defaults.json").write_text(json.dumps({"host": key, "args": vars(args),
                                                        "rows": rows}, indent=1))
    print(text)
    print(f"written: {out}")


if __name__ == "__main__":
    main()
