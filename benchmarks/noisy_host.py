"""A small sweep measured twice on this machine, quiet and deliberately disturbed, to show what
the host watch and the rounds do with a noisy host (docs/sweeps.md, Rounds):

    python benchmarks/noisy_host.py                       # torch and gluon CNN, six rounds
    python benchmarks/noisy_host.py framework=torch,flax task=rnn --spell 20 --duty 0.5

The disturbed sweep runs beside a CPU burner (one busy process per core) that switches on and
off in spells of random length (`--spell` seconds on average, on `--duty` of the time), or,
with `--cgroup`, inside a cgroup v2 whose cpu.max is stepped down and up in the
same spells (root, and a writable /sys/fs/cgroup). It prints each sweep's wall time, how many
runs the watch flagged and ran again, and `bench check`'s verdicts: the quiet sweep checked with
--agree-with the disturbed one (an order both declare must not flip; the A/A controls must be
ties), or the disturbed sweep's host verdict. Nothing else may run on the machine meanwhile.
The sweeps go to results/sweeps/noisy-quiet and noisy-disturbed (resumed if they exist: give
redo=true to start again).
"""

import argparse
import json
import multiprocessing
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

DEFAULT = ["framework=torch,gluon", "task=cnn", "preset=smoke", "seed=0,1,2,3,4,5"]


def burn(stop):
    while not stop.is_set():
        pass


class Spells:
    """A neighbour in spells: off for an exponential time of mean `spell`, then on for one of
    mean spell * duty / (1 - duty) (on `duty` of the time), as `cores` busy processes, or as a
    cgroup's cpu.max stepped down to 40 % of a core."""

    def __init__(self, spell, duty, cores, cgroup=None, seed=0):
        self.spell, self.duty, self.cores, self.cgroup = spell, duty, cores, cgroup
        self.rng = random.Random(seed)
        self.stop = threading.Event()
        self.log = []  # (monotonic start, end) of each spell
        self.thread = threading.Thread(target=self.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()

    def on(self):
        if self.cgroup:
            (self.cgroup / "cpu.max").write_text(f"{int(100000 * 0.4)} 100000\n")
            return []
        context = multiprocessing.get_context("spawn")
        flags = [context.Event() for _ in range(self.cores)]
        workers = [context.Process(target=burn, args=(f,), daemon=True) for f in flags]
        for w in workers:
            w.start()
        return list(zip(workers, flags))

    def off(self, burners):
        if self.cgroup:
            (self.cgroup / "cpu.max").write_text("max 100000\n")
        for worker, flag in burners:
            flag.set()
            worker.join(5)
            if worker.is_alive():
                worker.kill()

    def run(self):
        while not self.stop.is_set():
            if self.stop.wait(self.rng.expovariate(1 / self.spell)):
                return
            length = self.rng.expovariate(1 / (self.spell * self.duty / (1 - self.duty)))
            start, burners = time.monotonic(), self.on()
            self.stop.wait(length)
            self.off(burners)
            self.log.append((start, time.monotonic()))


def cgroup_for_sweep():
    """A cgroup v2 directory this process can move itself into, or None."""
    root = Path("/sys/fs/cgroup")
    if not (root / "cgroup.controllers").is_file() or os.geteuid() != 0:
        return None
    group = root / "rosetta-noisy"
    try:
        group.mkdir(exist_ok=True)
        (root / "cgroup.subtree_control").write_text("+cpu\n")
        return group if (group / "cpu.max").exists() else None
    except OSError:
        return None


def sweep(name, overrides, cgroup=None):
    """Run the sweep; (wall seconds, exit status)."""
    command = [sys.executable, "-m", "bench", "-m", *overrides, f"sweep={name}"]
    started = time.monotonic()
    if cgroup is not None:  # the sweep and its workers inside the group
        done = subprocess.run(
            ["sh", "-c", f'echo $$ > {cgroup}/cgroup.procs && exec "$0" "$@"', *command]
        )
    else:
        done = subprocess.run(command)
    return time.monotonic() - started, done.returncode


def flagged(name):
    """(runs flagged disturbed, set aside and run again) in a sweep's rounds.json."""
    plan = Path("results/sweeps", name, "rounds.json")
    if not plan.is_file():
        return 0, 0
    runs = json.loads(plan.read_text())["runs"]
    return sum(r["disturbed"] for r in runs), sum(r["attempt"] > 1 for r in runs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("overrides", nargs="*", help=f"the sweep (default: {' '.join(DEFAULT)})")
    parser.add_argument("--spell", type=float, default=15.0, help="mean seconds of a spell")
    parser.add_argument("--duty", type=float, default=0.4, help="share of the time disturbed")
    parser.add_argument("--cgroup", action="store_true", help="step a cgroup's cpu.max instead")
    args = parser.parse_args()
    overrides = args.overrides or DEFAULT
    if not any(o.startswith("rounds.control") for o in overrides):
        overrides = [*overrides, "rounds.control=auto"]
    wall_quiet, _ = sweep("noisy-quiet", overrides)
    group = cgroup_for_sweep() if args.cgroup else None
    if args.cgroup and group is None:
        sys.exit("--cgroup: no writable cgroup v2 here (root and /sys/fs/cgroup needed)")
    cores = max(1, len(os.sched_getaffinity(0)))
    with Spells(args.spell, args.duty, cores, group) as spells:
        wall_busy, _ = sweep("noisy-disturbed", overrides, group)
    on = sum(end - start for start, end in spells.log)
    for name, wall in (("noisy-quiet", wall_quiet), ("noisy-disturbed", wall_busy)):
        n, again = flagged(name)
        print(f"{name}: {wall / 60:.1f} min, {n} runs flagged disturbed, {again} run again")
    print(f"the neighbour: {len(spells.log)} spells, {on:.0f} s of {wall_busy:.0f} s")
    check = [sys.executable, "-m", "bench", "check", "results/sweeps/noisy-quiet"]
    subprocess.run([*check, "--agree-with", "results/sweeps/noisy-disturbed"])


if __name__ == "__main__":
    main()
