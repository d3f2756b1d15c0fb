"""The stopwatch of the timing protocol (SPEC.md "What is timed").

Every timed region is bracketed by the framework's `sync()` at both ends, so work queued
before the region is not billed to it and work queued inside it is not left out.
"""

import contextlib
import os
import time

# the regions whose seconds a result ranks by: the host is watched during these windows
# (the orchestrator's bench.run.hostwatch), which the stopwatch records on the system's
# monotonic clock, the one every process on the machine reads alike
TIMED = ("epoch", "inference")


class Stopwatch(object):
    def __init__(self, sync):
        self.sync = sync
        self.regions = {}  # name -> list of seconds, in order
        self.windows = []  # [{"region", "start", "end"}] of the TIMED regions, monotonic

    @contextlib.contextmanager
    def region(self, name):
        start = self.start()
        yield start
        self.stop(name, start)

    def start(self):
        """Open a region (for a framework that brackets its own, e.g. from a callback): sync,
        then the clock's start, which stop() takes."""
        self.sync()
        return time.perf_counter()

    def stop(self, name, start):
        self.sync()
        end = time.perf_counter()
        self.regions.setdefault(name, []).append(end - start)
        if name in TIMED:  # perf_counter's seconds placed on the monotonic clock
            offset = time.monotonic() - time.perf_counter()
            self.windows.append({"region": name, "start": start + offset, "end": end + offset})

    def last(self, name):
        return self.regions[name][-1]


def peak_rate(work, units_per_call, calls=2, rounds=4, warm_up=True):
    """The best rate (units per second) of `rounds` timed rounds of `work(calls)`, after one
    untimed `work(1)` warm-up. `work(n)` makes n calls and waits for the last to finish (on an
    asynchronous device too). A peak is a maximum: the best round is the one a busy machine
    disturbed least (one disturbed mean halved a peak on a shared CI machine, doubling the
    utilisation measured against it)."""
    if warm_up:
        work(1)
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        work(calls)
        best = min(best, time.perf_counter() - start)
    return units_per_call * calls / best


PEAK_SIZES = (256, 512, 1024, 2048)
MAX_CALL_S = 1.0  # the largest product a peak measurement takes, in seconds


def peak_matmul_rate(make_work, sizes=PEAK_SIZES, max_call_s=MAX_CALL_S):
    """peak_rate of square matrix products (FLOP/s) at the largest of `sizes` whose product
    takes at most about max_call_s: make_work(size) -> work as peak_rate takes it. A precision
    a CPU emulates runs thousands of times slower than one it has instructions for (bf16
    without AVX-512: one 2048 product took 124 s against 0.8 s at fp32, on a 2-core AVX2
    EPYC), and the peak is measured after every run."""
    for index, size in enumerate(sizes):
        work = make_work(size)
        work(1)  # the first call compiles or allocates
        start = time.perf_counter()
        work(1)
        took = time.perf_counter() - start
        # a product of twice the size takes about eight times as long
        if index + 1 == len(sizes) or took * 8 > max_call_s:
            return peak_rate(work, matmul_flops(size), warm_up=False)


def matmul_flops(size):
    """FLOPs of one product of two size x size matrices."""
    return 2.0 * size**3


def process_age():
    """Seconds since this process started (its start from /proc/self/stat against the
    system's uptime; a clock tick's resolution), or None where the system does not say."""
    try:
        with open("/proc/self/stat") as f:
            started = int(f.read().rsplit(")", 1)[1].split()[19])  # starttime, in clock ticks
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return max(0.0, uptime - started / float(os.sysconf("SC_CLK_TCK")))
    except (OSError, ValueError, IndexError):
        return None
