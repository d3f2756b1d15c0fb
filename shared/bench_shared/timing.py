"""The stopwatch of the timing protocol (SPEC.md "What is timed").

Every timed region is bracketed by the framework's `sync()` at both ends, so work queued
before the region is not billed to it and work queued inside it is not left out.
"""
import contextlib
import time


class Stopwatch(object):
    def __init__(self, sync):
        self.sync = sync
        self.regions = {}  # name -> list of seconds, in order

    @contextlib.contextmanager
    def region(self, name):
        self.sync()
        start = time.perf_counter()
        yield start
        self.sync()
        self.regions.setdefault(name, []).append(time.perf_counter() - start)

    def last(self, name):
        return self.regions[name][-1]


def peak_rate(work, units_per_call, calls=2, rounds=4):
    """The best rate (units per second) of `rounds` timed rounds of `work(calls)`, after one
    untimed `work(1)` warm-up. `work(n)` makes n calls and waits for the last to finish (on an
    asynchronous device too). A peak is a maximum: the best round is the one a busy machine
    disturbed least (one disturbed mean halved a peak on a shared CI machine, doubling the
    utilisation measured against it)."""
    work(1)
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        work(calls)
        best = min(best, time.perf_counter() - start)
    return units_per_call * calls / best


def matmul_flops(size):
    """FLOPs of one product of two size x size matrices."""
    return 2.0 * size ** 3
