"""`python -m bench reproduce RESULT.json [more results of the same configuration] [--repeats N]`:
run a recorded result again and judge it against the original.

Before anything runs, it refuses (unless --anyway) in one line per difference: a checkout at
another commit than the result's (or a result from a tree with uncommitted changes), a
configuration that composes differently from the recorded one (conf/ changed), and a
framework environment whose packages differ from those the result recorded. Then it composes
exactly the recorded overrides, runs them --repeats times as real runs (a worker each, their
result.json under --out), and gives the verdict of the baseline rule (bench.report.verdict:
the medians apart by more than --min-change and the runs not overlapping): same, faster or
slower, with the ratio and its range.

Exit status: 0 the same; 1 faster, slower or a run failed; 2 a refusal, a bad command line or
an unreadable result; 130 after Ctrl-C, 143 after SIGTERM.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from omegaconf import OmegaConf

from .. import project_dir, signals
from ..console import count, fraction, subcommand
from ..errors import BenchError
from ..report import verdict
from ..report.collection import Result, result_files
from ..report.metrics import headline
from ..run import benchmark, config, environments, locks, record, summary, sweep, sysinfo

REPEATS = 3
MIN_CHANGE = 0.05


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
        "--anyway",
        action="store_true",
        help="run even where the commit, the config or the packages differ (each "
        "difference is still said)",
    )
    p.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="where the new runs go (default results/reproduce/<time>_<run>)",
    )
    return p


def originals(paths):
    """The results to reproduce (the first) and judge against (all), as report Results; every
    one the same configuration on the same hardware."""
    found = []
    for path in result_files(paths):
        try:
            found.append(Result.from_result(path, record.load(path)))
        except ValueError as exc:
            raise Refused(f"{path}: {exc}") from None
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
    python, _ = environments.find_python(cfg.framework)
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


@subcommand
def main(argv):
    args = parser().parse_args(argv)
    signals.install()
    try:
        runs = originals(args.results)
        result = runs[0].result
        problems = []
        code = code_difference(result)
        if code:
            problems.append(f"code: {code}")
        cfg, config_dict, changed = composed(result)
        if changed:
            problems.append(f"config: the recorded overrides compose differently now ({changed})")
        packages = package_differences(result, cfg)
        problems += [f"package: {line}" for line in packages]
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
    label = summary.label(result)
    out = Path(
        args.out
        or Path(
            "results",
            "reproduce",
            time.strftime("%Y-%m-%d_%H-%M-%S") + "_" + sweep.bounded_name(label.replace(" ", "_")),
        )
    )
    try:
        again = run_again(cfg, config_dict, result["overrides"], out.absolute(), args.repeats)
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
    new = [metric.value(r, kind) for r in again]
    old = [r.value(metric) for r in runs]
    judged = verdict.judge(metric, new, old, args.min_change, min_runs=1)
    print(
        f"reproduce: {label}: {judged.text()} — {judged.ratio:.2f}× "
        f"({judged.low:.2f}–{judged.high:.2f}) the original's {metric.title} "
        f"({len(new)} runs now against {len(old)}; accuracy "
        f"{_median([r['accuracy'] for r in again if r.get('accuracy') is not None])} now, "
        f"{_median([r.accuracy for r in runs if r.accuracy is not None])} then); new runs: "
        f"{out}"
    )
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
