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
