"""The canary: a fixed small kernel timed just before a run's workers start and just after they
end, against this host's reference for it (the fastest it ever ran here), so that a host
slower than itself (a throttled or oversubscribed VM, a neighbour on the same physical cores,
which steal time may not show) is seen. Two kernels, each the best of its repeats within its
share of the budget: a dense matrix product at NumPy's thread count (every usable core, as
the frameworks' own thread pools) and a single-threaded interpreter loop. A slow spell longer
than the canary makes every repeat slow; a blip does not.

The reference is kept per host (bench.run.host_files' slug: CPU model, flags, usable CPUs)
in `<cache>/hosts/<slug>/canary.json`, with when it was measured; the canary flags a run
(bench.run.hostwatch.verdict), never rescales a figure.
"""

import datetime
import os
import time

from .. import files
from . import host_files, sysinfo

VERSION = 1  # a change of the kernels below is a new canary: its reference starts again
GEMM_SIZE = 512  # large enough for BLAS to use every thread (it runs small ones on one)
LOOP_STEPS = 50_000


def _best(kernel, budget_s):
    """The best time of `kernel()` over repeats filling budget_s (at least three), after a
    quarter of it spent warming up (a fresh process's first products also start BLAS's
    threads and fault in its buffers: one warm-up call left the first canary 25 % slow)."""
    warm_until = time.perf_counter() + budget_s / 4
    kernel()
    while time.perf_counter() < warm_until:
        kernel()
    best, spent, count = float("inf"), 0.0, 0
    while count < 3 or spent < budget_s:
        start = time.perf_counter()
        kernel()
        took = time.perf_counter() - start
        best, spent, count = min(best, took), spent + took, count + 1
        if count >= 1000:
            break
    return best


def _loop():
    total = 0
    for i in range(LOOP_STEPS):
        total += i * i
    return total


def threads():
    """The threads NumPy's BLAS runs the product on: its variables', else every usable core."""
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        if os.environ.get(variable, "").isdigit():
            return int(os.environ[variable])
    return sysinfo.cpu_affinity()


def measure(budget_s):
    """{gemm_s, loop_s}: each kernel's best time within half of budget_s."""
    import numpy as np  # the orchestrator's, imported only where a run measures

    a = np.random.default_rng(0).standard_normal((GEMM_SIZE, GEMM_SIZE))
    return {
        "gemm_s": _best(lambda: a @ a, budget_s / 2),
        "loop_s": _best(_loop, budget_s / 2),
    }


def _path(cache_dir):
    return host_files.host_dir(cache_dir, sysinfo.host_key()) / "canary.json"


def judged(before, after, cache_dir, budget):
    """The result's `canary`: the times before and after, this host's reference for this
    budget (a best of fewer repeats lies higher: each budget has its own; updated with them,
    under its lock) and the slowdown, the worst kernel's time over the reference's, minus
    one; None where either time is missing."""
    if not before or not after:
        return None
    path = _path(cache_dir)
    key = {
        "version": VERSION,
        "threads": threads(),
        "gemm_size": GEMM_SIZE,
        "loop": LOOP_STEPS,
        "budget_s": budget,
    }
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    with files.locked(path):
        try:
            every = files.read_json(path, "the canary's reference starts again")
        except ValueError:
            every = None
        every = every if isinstance(every, list) else []
        kept = next((k for k in every if isinstance(k, dict) and k.get("key") == key), None)
        if kept is None:
            kept = {"key": key, "gemm_s": None, "loop_s": None, "measured": now, "runs": 0}
            every.append(kept)
        for kernel in ("gemm_s", "loop_s"):
            fastest = min(before[kernel], after[kernel])
            if kept[kernel] is None or fastest < kept[kernel]:
                kept[kernel], kept["measured"] = fastest, now
        kept["runs"] = int(kept.get("runs") or 0) + 1
        files.write_json(path, every)
    reference = {
        "gemm_s": kept["gemm_s"],
        "loop_s": kept["loop_s"],
        "measured": kept["measured"],
        "threads": key["threads"],
        "budget_s": budget,
    }
    return {
        "before": before,
        "after": after,
        "reference": reference,
        "slowdown": slowdown(before, after, reference),
    }


def slowdown(before, after, reference):
    """How much slower than the reference the host ran the canary around the run: per kernel
    the faster of its two times (a slow spell over the run slows both; one slow side alone
    was as often the machine's own jitter, up to 1.8x once on a quiet 2-core VM), the worst
    kernel's over its reference, minus one (0: as fast as this host has ever run it)."""
    worst = max(
        min(before[kernel], after[kernel]) / reference[kernel] for kernel in ("gemm_s", "loop_s")
    )
    return round(worst - 1.0, 4)
