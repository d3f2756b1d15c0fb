"""`python -m bench peak`: this host's peak dense matrix-multiply FLOP/s, fp32, bf16 and int8.

Each installed framework environment measures its own GEMM once, in a worker (the package's
optional `peak_flops(precision)` hook, after its `setup`: the same threads and device as its
runs); the host peak of a precision is the best of them. int8 is counted in operations per
second (a multiply and an add each, as FLOP/s count them), from each framework's own int8 GEMM
(VNNI or AMX where the CPU has them), so that an int8 run's utilisation has an int8 peak
beneath it. Cached per host in the cache
directory (bench.run.host_files: <cache>/hosts/<host>/peak.json); every later run on that host
reports `host_utilisation` (achieved FLOP/s over the host peak) beside `utilisation` (over its
own framework's peak). Measured once: `--redo` measures again.

Exit status: 0; 1 when no installed framework could measure a peak, or the workers'
directory or the cache cannot be written (said before any worker starts); 2 a bad command line.
"""

import argparse
import sys
import time
from pathlib import Path

from bench_shared import contract

from .. import files
from ..console import subcommand
from ..errors import BenchError
from ..run import (
    benchmark,
    capabilities,
    config,
    environments,
    host_files,
    launch,
    sysinfo,
    worker_env,
)
from . import as_flags

VERSION = 1
PRECISIONS = ("fp32", "bf16", "int8")
TIMEOUT_S = 600.0


def _supported_task(framework, precision, device):
    """A task the framework runs at this precision by its declaration (the peak does not
    depend on which), or None; read without composing a config (Hydra: a second each)."""
    declared = capabilities.declared(framework)["capabilities"]
    return next(
        (
            task
            for task in declared["tasks"]
            if contract.unsupported(declared, framework, task, device, precision) is None
        ),
        None,
    )


def measure(frameworks, device, out_dir: Path):
    """{framework: {precision: FLOP/s or the reason there is none}} from one worker each."""
    figures, measured_in = {}, {}
    for fw in frameworks:
        figures[fw] = {}
        missing = None  # the first precision's "not installed": the same for the second
        for precision in PRECISIONS:
            task = _supported_task(fw, precision, device)
            cfg = task and config.compose(
                [
                    f"framework={fw}",
                    f"task={task}",
                    f"precision={precision}",
                    f"device={device}",
                    "preset=smoke",
                ]
            )
            try:
                if cfg is not None:
                    capabilities.check(cfg)  # what only this machine tells (a GPU?)
            except BenchError:
                cfg = None
            if cfg is None:
                figures[fw][precision] = "unsupported"
                continue
            if missing:
                figures[fw][precision] = missing
                continue
            try:
                python, _ = environments.framework_python(cfg.framework)
            except BenchError:
                missing = figures[fw][precision] = (
                    f"not installed (nox -s {cfg.framework.nox_session})"
                )
                continue
            same = measured_in.get((python, cfg.framework.module, precision))
            if same:  # e.g. gluon and mxnet: one environment, one GEMM
                figures[fw][precision] = f"same environment as {same}"
                continue
            run = benchmark.worker_run(cfg, {"arrays": {}, "limits": {}})
            run["mode"] = "peak"
            print(f"peak: {fw} {precision} ...", flush=True)
            raw = launch.run_worker(
                python,
                run,
                out_dir / f"{fw}_{precision}",
                TIMEOUT_S,
                worker_env.environment_for(cfg, python),
            )
            if raw.get("interrupted"):
                raise KeyboardInterrupt()
            if raw["status"] == "ok" and raw.get("peak_flops") is None:
                figures[fw][precision] = "no matrix product at this precision"
            elif raw["status"] == "ok":
                figures[fw][precision] = raw["peak_flops"]
                measured_in[python, cfg.framework.module, precision] = fw
            else:
                figures[fw][precision] = f"{raw['status']}: {raw.get('error', '')}"
    return figures


def document(figures, device, index=0):
    """peak.json: per precision the best figure and the framework that reached it."""
    best = {}
    for fw, by_precision in figures.items():
        for precision, value in by_precision.items():
            if isinstance(value, float) and value > best.get(precision, {}).get("flops", 0):
                best[precision] = {"flops": value, "framework": fw}
    return {
        "version": VERSION,
        "host": sysinfo.host_key(device, index),
        "measured": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "precisions": best,
        "frameworks": figures,
    }


def gflops(flops, precision="fp32"):
    """A peak in words: int8 in integer operations per second."""
    return f"{flops / 1e9:.3g} {'GOP/s' if precision == 'int8' else 'GFLOP/s'}"


def show(peak):
    lines = [f"host peak of {sysinfo.host_slug(peak['host'])} (measured {peak['measured']}):"]
    for precision in PRECISIONS:
        entry = peak["precisions"].get(precision)
        lines.append(
            f"  {precision}: "
            + (
                f"{gflops(entry['flops'], precision)} ({entry['framework']})"
                if entry
                else "no installed framework measured it"
            )
        )
    for fw, by_precision in sorted(peak["frameworks"].items()):
        cells = [
            f"{p} "
            + (
                gflops(by_precision[p], p)
                if isinstance(by_precision[p], float)
                else by_precision[p]
            )
            for p in PRECISIONS
            if p in by_precision
        ]
        lines.append(f"  {fw}: " + "; ".join(cells))
    return "\n".join(lines)


@subcommand
def main(argv):
    parser = argparse.ArgumentParser(
        prog="python -m bench peak",
        description="This host's peak dense matrix-multiply FLOP/s (fp32, bf16, int8): each "
        "installed framework measures its own GEMM in a worker; the best is the host "
        "peak, cached per host, and every later run reports host_utilisation "
        "against it.",
        epilog="exit status: 0; 1 when no installed framework could measure a peak, or its "
        "directories cannot be written; 2 a bad command line.",
    )
    parser.add_argument(
        "--frameworks",
        default=",".join(capabilities.framework_names()),
        metavar="A,B",
        help="comma-separated, or framework=a,b (default: every installed one)",
    )
    parser.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    parser.add_argument(
        "--redo", action="store_true", help="measure again even where the host's peak is cached"
    )
    parser.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="the workers' directories (default results/peak/<time>)",
    )
    parser.add_argument(
        "--cache-dir",
        default=None,
        metavar="DIR",
        help="the cache directory (default: $BENCH_CACHE_DIR, else ~/.cache/rosetta-bench)",
    )
    args = parser.parse_args(as_flags(argv, {"framework": "--frameworks", "device": "--device"}))
    frameworks = args.frameworks.split(",")
    unknown = sorted(set(frameworks) - set(capabilities.framework_names()))
    if unknown:
        parser.error(
            f"unknown framework(s) {unknown}; known: {', '.join(capabilities.framework_names())}"
        )
    cached = host_files.load_peak(args.cache_dir, args.device)
    if cached is not None and not args.redo:
        print(show(cached))
        print(f"cached: {cached['file']} (--redo measures again)")
        return 0
    out_dir = Path(args.out or f"results/peak/{time.strftime('%Y-%m-%d_%H-%M-%S')}").absolute()
    file = host_files.peak_path(args.cache_dir, args.device)
    try:  # before a worker measures anything
        files.check_writable(out_dir, "the workers' directory", "--out DIR puts it elsewhere")
        files.check_writable(
            file.parent,
            "the host peak's directory",
            "--cache-dir DIR (or BENCH_CACHE_DIR) puts it elsewhere",
        )
    except files.NotWritable as exc:
        print(f"peak: {exc}", file=sys.stderr)
        return 1
    try:
        figures = measure(frameworks, args.device, out_dir)
    except KeyboardInterrupt:
        print("\ninterrupted: no host peak written", flush=True)
        return 130
    peak = document(figures, args.device)
    if not peak["precisions"]:
        print(show(dict(peak, measured="now")))
        print("peak: no installed framework measured a peak; nothing written", file=sys.stderr)
        return 1
    try:
        files.write_json(file, peak)
    except OSError as exc:
        print(show(peak))
        print(
            f"peak: the host peak could not be written: {files.path_problem(exc) or exc}",
            file=sys.stderr,
        )
        return 1
    print(show(peak))
    print(f"written: {file}")
    return 0
