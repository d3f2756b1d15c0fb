"""Progress events from the worker to the orchestrator, one JSON line each on stdout.

The worker depends on numpy alone, so it cannot draw progress bars; the orchestrator reads
these lines and draws them. Batch events are throttled so that reporting costs nothing
measurable inside a timed loop.
"""

import json
import sys
import time

PREFIX = "@@bench "


def emit(event, **fields):
    fields["event"] = event
    sys.stdout.write(PREFIX + json.dumps(fields) + "\n")
    sys.stdout.flush()


def parse(line):
    """The event dict of a progress line, or None for any other output."""
    if not line.startswith(PREFIX):
        return None
    try:
        return json.loads(line[len(PREFIX) :])
    except ValueError:
        return None


class Throttle(object):
    """Calls emit('step', ...) at most every `interval` seconds."""

    def __init__(self, phase, total, interval=0.5):
        self.phase, self.total, self.interval = phase, total, interval
        self.next_time = 0.0

    def __call__(self, index):
        now = time.perf_counter()
        if now >= self.next_time:
            self.next_time = now + self.interval
            emit("step", phase=self.phase, done=index, total=self.total)
