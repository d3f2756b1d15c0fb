"""`python -m bench reproduce result.json [more results of the same configuration] [--repeats N]`:
run a recorded result again and judge it against the original.

The original side is every result given and every other run of the same configuration, host
and commit that lies beside the first in its bundle (a sweep's directory, docs/results/<cpu>/).
Before anything runs, it refuses (unless --anyway) in one line per difference: a checkout at
another commit than the result's (or a result from a tree with uncommitted changes, or a
commit this repository does not have), another host (the CPU model, the CPU flags that pick
kernels, the CPUs usable, the GPU), a configuration that composes differently from the
recorded one (conf/ changed), and a framework environment whose packages differ from those
the result recorded; and where the rule could not judge (fewer than --min-runs runs on a
side). Then it composes exactly the recorded overrides, runs them --repeats times as real runs
(a worker each, their result.json under --out), and gives the verdict of the baseline rule
(bench.report.verdict: the medians apart by more than --min-change and the runs not
overlapping): same, faster or slower, with the ratio and its range. On another host (with
--anyway) the ratio is given as a comparison of two hosts, never as a verdict.

Exit status: 0 the same, or compared on another host; 1 faster, slower or a run failed; 2 a
refusal, a bad command line or an unreadable result; 130 after Ctrl-C, 143 after SIGTERM.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from omegaconf import OmegaConf

from .. import files, project_dir, signals
from ..console import count, fraction, subcommand
from ..errors import BenchError
from ..report import verdict
from ..report.collection import Result
from ..report.metrics import headline
from ..run import benchmark, config, environments, locks, results, summary, sweep, sysinfo

REPEATS = 3
MIN_CHANGE = 0.05
MIN_RUNS = 2  # the baseline rule's (report --min-runs)


class Refused(BenchError):
    """What stops a reproduction before it runs; the message says what differs."""


def parser():
    p = argparse.ArgumentParser(
        prog="python -m bench reproduce",
        description="Run a recorded result again, as recorded (same overrides, same commit's "
        "config, the same packages), and judge the new runs against it by the "
        "baseline rule: same, faster or slower.",
        epilog="exit status: 0 the same; 1 changed (faster or slower) or a run failed; 2 "
        "refused (what differs is named), a bad command line or an unreadable result.",
    )
    p.add_argument(
        "results",
        nargs="+",
        metavar="RESULT",
        help="the result.json to reproduce, and more runs of the same "
        "configuration (files or directories) to judge against",
    )
    p.add_argument(
        "--repeats",
        type=count,
        default=REPEATS,
        metavar="N",
        help=f"runs of it now (default {REPEATS})",
    )
    p.add_argument(
        "--min-change",
        type=fraction,
        default=MIN_CHANGE,
        metavar="X",
        help=f"the change the rule calls real, as a fraction (default {MIN_CHANGE})",
    )
    p.add_argument(
        "--min-runs",
        type=count,
        default=MIN_RUNS,
        metavar="N",
        help=f"runs each side needs before a change is judged, as `report --baseline` "
        f"(default {MIN_RUNS}): --repeats and the original runs",
    )
    p.add_argument(
        "--anyway",
        action="store_true",
        help="run even where the commit, the host, the config or the packages differ (each "
        "difference is still said; on another host the runs are compared, not judged)",
    )
    p.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="where the new runs go (default results/reproduce/<time>_<run>)",
    )
    return p


def originals(paths):
    """The results to reproduce (the first) and judge against (all of them, and the runs of
    the same configuration that lie beside the first in its bundle), as report Results; every
    one the same configuration on the same hardware."""
    try:
        reading = results.read(paths)
    except FileNotFoundError as exc:
        raise Refused(str(exc)) from None
    if reading.unreadable:
        path, exc = reading.unreadable[0]
        raise Refused(f"{path}: {exc.rule}: {exc}")
    found = [Result.from_result(path, result) for path, result in reading.results]
    if not found:
        raise Refused(f"no result.json in {' '.join(map(str, paths))}")
    first = found[0]
    others = [r for r in found if (r.identity, r.hardware) != (first.identity, first.hardware)]
    if others:
        raise Refused(
            f"{others[0].path} is another configuration than {first.path}: give "
            f"runs of one configuration"
        )
    bad = [r for r in found if r.status != "ok"]
    if bad:
        raise Refused(f"{bad[0].path} is {bad[0].status}: only ok results can be reproduced")
    return found + beside(first, found)


def same_origin(run, first):
    """Whether `run` is another repeat of `first`: the same configuration and hardware, run ok
    on the same host from the same commit."""
    host, other = first.result.get("host") or {}, run.result.get("host") or {}
    return (
        run.status == "ok"
        and (run.identity, run.hardware) == (first.identity, first.hardware)
        and run.commit == first.commit
        and other.get("hostname") == host.get("hostname")
        and other.get("cpu_flags") == host.get("cpu_flags")
    )


def beside(first, given):
    """The repeats of `first` in its bundle (the directory its run's directory is in: a sweep's,
    or a bundle's such as docs/results/<cpu>/) that were not given: one file of a bundle is
    judged against every run of its configuration there."""
    bundle = Path(first.path).resolve().parent.parent
    known = {Path(r.path).resolve() for r in given}
    candidates = [p for p in sorted(bundle.glob("*/result.json")) if p.resolve() not in known]
    if not candidates:
        return []
    reading = results.read(candidates)
    known_bytes = {Path(r.path).read_bytes() for r in given}
    found = [Result.from_result(path, result) for path, result in reading.results]
    return [
        r for r in found if same_origin(r, first) and Path(r.path).read_bytes() not in known_bytes
    ]


def host_differences(result):
    """[what differs between the host a result ran on and this one]: the CPU model, the CPU
    flags that pick kernels, the CPUs usable, the GPU a gpu run used."""
    host = result.get("host") or {}
    found = []
    if host.get("cpu") != sysinfo.cpu_model():
        found.append(f"CPU {sysinfo.cpu_model()} (recorded {host.get('cpu') or 'none'})")
    recorded = set(host.get("cpu_flags") or ())
    here = set(sysinfo.cpu_flags())
    if recorded != here:
        changes = [f"+{f}" for f in sorted(here - recorded)] + [
            f"-{f}" for f in sorted(recorded - here)
        ]
        found.append(f"CPU flags {' '.join(changes)} (recorded {', '.join(sorted(recorded))})")
    if host.get("cpu_affinity") and host["cpu_affinity"] != sysinfo.cpu_affinity():
        found.append(f"{sysinfo.cpu_affinity()} CPUs usable (recorded {host['cpu_affinity']})")
    if (result.get("config") or {}).get("device", {}).get("name") == "gpu":
        recorded_gpus = [g.get("name") for g in host.get("gpus") or []]
        here_gpus = [g[0] for g in sysinfo.gpus()]
        if recorded_gpus != here_gpus:
            found.append(
                f"GPUs {', '.join(here_gpus) or 'none'} (recorded "
                f"{', '.join(recorded_gpus) or 'none'})"
            )
    return found


def code_difference(result):
    """Why this checkout is not the one the result ran from, or None."""
    recorded = (result.get("host") or {}).get("git_commit")
    here = sysinfo.git_commit(project_dir())
    if not recorded:
        return "the result records no code commit (it was not run from a git checkout)"
    if recorded.endswith("-dirty"):
        return (
            f"the result ran from a tree with uncommitted changes ({recorded}): its code "
            f"cannot be checked out again"
        )
    if here != recorded:
        if not sysinfo.has_commit(project_dir(), recorded):
            return (
                f"the result ran at commit {recorded}, which this repository does not have "
                f"(this checkout is at {here or 'no commit'}): fetch it from the repository "
                f"the result was made in (or --anyway)"
            )
        return (
            f"the result ran at commit {recorded}, this checkout is at {here or 'no commit'}"
            f": `git checkout {recorded}` (or --anyway)"
        )
    return None


def composed(result):
    """(the typed config and the config dict the recorded overrides compose to now, the first
    difference from the recorded config or None)."""
    overrides = result.get("overrides")
    if overrides is None:
        raise Refused("the result records no overrides (a result from before they were kept)")
    node = config.compose(overrides, typed=False)
    now = OmegaConf.to_container(node, resolve=True)
    changed = sweep.first_difference(sweep.comparable(result["config"]), sweep.comparable(now))
    return OmegaConf.to_object(node), now, changed


def package_differences(result, cfg):
    """[one line per distribution that differs] between the result's environment and the
    framework environment found now."""
    recorded = (result.get("environment") or {}).get("distributions")
    if recorded is None:
        return ["the result records no environment (schema 1): its packages cannot be compared"]
    python, _ = environments.framework_python(cfg.framework)
    out = subprocess.run(
        [python, "-m", "bench_shared.environment"],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    if out.returncode != 0:
        return [f"{python} could not list its packages: {out.stderr.strip()[-200:]}"]
    here = json.loads(out.stdout)["distributions"]
    return [
        f"{name} {now or 'missing'} (recorded {then or 'absent'})"
        for name, then, now in locks.version_changes(recorded, here)
    ]


def run_again(cfg, config_dict, overrides, out: Path, repeats):
    """`repeats` real runs into out/run-<k>; their results."""
    found = []
    for k in range(1, repeats + 1):
        print(f"reproduce: run {k} of {repeats}", flush=True)
        found.append(benchmark.run_benchmark(cfg, config_dict, out / f"run-{k}", overrides))
    return found


def out_dir(args, label):
    """Where the new runs go (--out, or results/reproduce/<time>_<run>), checked writable
    before anything runs: Refused naming --out where it is not."""
    out = Path(
        args.out
        or Path(
            "results",
            "reproduce",
            time.strftime("%Y-%m-%d_%H-%M-%S") + "_" + sweep.bounded_name(label.replace(" ", "_")),
        )
    ).absolute()
    try:
        files.check_writable(out, "the new runs' directory", "--out DIR puts them elsewhere")
    except BenchError as exc:
        raise Refused(str(exc)) from None
    return out


def enough_runs(args, runs):
    """Refused, before anything runs, where the baseline rule could not judge: it needs
    --min-runs runs on each side (one run each cannot tell a regression from a busy
    machine), as `report --baseline` does."""
    if args.repeats < args.min_runs:
        raise Refused(
            f"--repeats {args.repeats}: the rule judges only with {args.min_runs} runs or "
            f"more on each side (--min-runs); one run each cannot tell a change from a "
            f"busy machine"
        )
    if len(runs) < args.min_runs:
        raise Refused(
            f"{len(runs)} original run of this configuration (none beside it in "
            f"{Path(runs[0].path).resolve().parent.parent}): the rule judges only with "
            f"{args.min_runs} runs or more on each side (--min-runs); give its other runs"
        )


@subcommand
def main(argv):
    args = parser().parse_args(argv)
    signals.install()
    try:
        runs = originals(args.results)
        result = runs[0].result
        enough_runs(args, runs)
        problems = []
        code = code_difference(result)
        if code:
            problems.append(f"code: {code}")
        elsewhere = host_differences(result)
        problems += [f"host: {line}" for line in elsewhere]
        cfg, config_dict, changed = composed(result)
        if changed:
            problems.append(f"config: the recorded overrides compose differently now ({changed})")
        packages = package_differences(result, cfg)
        problems += [f"package: {line}" for line in packages]
        label = summary.label(result)
        out = out_dir(args, label)
    except BenchError as exc:
        print(f"reproduce: {exc}", file=sys.stderr)
        return 2
    for problem in problems:
        print(f"reproduce: {problem}", file=sys.stderr if not args.anyway else sys.stdout)
    if problems and not args.anyway:
        print(
            "reproduce: refused: what it would run is not what ran (--anyway runs it nevertheless)",
            file=sys.stderr,
        )
        return 2
    try:
        again = run_again(cfg, config_dict, result["overrides"], out, args.repeats)
    except KeyboardInterrupt as exc:
        signals.ignore()
        print(
            f"\nreproduce: interrupted ({getattr(exc, 'what', 'Ctrl-C')}); the finished runs "
            f"are in {out}",
            flush=True,
        )
        return getattr(exc, "exit_status", 130)
    failed = [r for r in again if r["status"] != "ok"]
    if failed:
        print(
            f"reproduce: {len(failed)} of {len(again)} runs were not ok "
            f"({failed[0]['status']}: {failed[0].get('error', '')[:200]})"
        )
        return 1
    metric = headline({runs[0].preset})
    kind = runs[0].kind
    busy = [r for r in again if (r.get("host_state") or {}).get("disturbed")]
    new = [metric.value(r, kind) for r in again if r not in busy]
    old = [r.value(metric) for r in runs if not r.disturbed]
    if len(new) < args.min_runs or len(old) < args.min_runs:  # the host's, not the install's
        side = "the new runs" if len(new) < args.min_runs else "the original runs"
        flagged = busy or [r.result for r in runs if r.disturbed]
        reasons = "; ".join((flagged[0].get("host_state") or {}).get("reasons") or [])
        print(
            f"reproduce: {summary.label(result)}: not judged: the host was busy during {side} "
            f"({reasons or 'flagged disturbed'}; {len(flagged)} disturbed, "
            f"{min(len(new), len(old))} undisturbed where {args.min_runs} are needed); new "
            f"runs: {out}"
        )
        return 1
    judged = verdict.judge(metric, new, old, args.min_change, args.min_runs)
    figures = (
        f"{judged.ratio:.2f}× ({judged.low:.2f}–{judged.high:.2f}) the original's "
        f"{metric.title} ({len(new)} runs now against {len(old)}; accuracy "
        f"{_median([r['accuracy'] for r in again if r.get('accuracy') is not None])} now, "
        f"{_median([r.accuracy for r in runs if r.accuracy is not None])} then); new runs: "
        f"{out}"
    )
    if elsewhere:  # --anyway on another host: a comparison of two hosts, not a reproduction
        print(f"reproduce: {label}: another host ({'; '.join(elsewhere)}), not judged: {figures}")
        return 0
    print(f"reproduce: {label}: {judged.text(args.min_runs)} — {figures}")
    return 0 if judged.kind == verdict.SAME else 1


def _median(values):
    if not values:
        return "-"
    values = sorted(values)
    middle = len(values) // 2
    value = values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2
    return f"{value:.4f}"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
