"""The host watched during every run: what the operating system says about the run's timed
windows (CPU time stolen by the hypervisor, CPU time taken by other processes, runnable
tasks), so that a run a slow spell of the host disturbed is flagged rather than ranked.

A Sampler thread of the orchestrator reads /proc/stat (the counters of the CPUs the run may
use, and the runnable tasks) and the CPU time of the run's own processes (/proc/<pid>/stat,
their exited children included) every `interval_s` while the workers run. The worker records
when its timed regions ran, on the system's monotonic clock (bench_shared.timing.TIMED);
`span` takes the samples around the timed windows (whole sampling intervals, so that a
window shorter than one is still judged), and `state` turns its counters and the canary
(bench.run.canary) into the result's `host_state`: the figures, the declared thresholds,
`disturbed` and the reasons. The figures and the flag follow from the counters recorded beside
them (bench.run.evidence re-derives them). The canary flags a run; nothing here ever
rescales a figure.

Where the operating system gives no /proc/stat, the result says so (`watched: false`).
"""

import math
import os
import statistics
import threading
import time

STAT = "/proc/stat"
# the /proc/stat fields, in order; busy is what a process ran (guest time is in user already)
FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
BUSY = ("user", "nice", "system", "irq", "softirq")


def clock_ticks():
    try:
        return os.sysconf("SC_CLK_TCK")
    except (ValueError, OSError, AttributeError):
        return 100


def read_stat(cpus):
    """({field: ticks} summed over `cpus`, runnable tasks) from /proc/stat, or None."""
    try:
        with open(STAT) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    wanted = {f"cpu{c}" for c in cpus}
    totals = dict.fromkeys(FIELDS, 0)
    runnable = None
    for line in lines:
        name, _, rest = line.partition(" ")
        if name in wanted:
            for field, value in zip(FIELDS, rest.split()):
                totals[field] += int(value)
        elif name == "procs_running":
            runnable = int(rest)
    return totals, runnable


def process_ticks(pid, children=True):
    """utime + stime of a process (ticks), with children those of its exited children too,
    or None once it has gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return sum(int(v) for v in fields[11 : 15 if children else 13])  # utime stime cutime cstime


def session_pids(sid):
    """The processes of session `sid` (an MPI job's ranks live in mpiexec's session)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[3]) == sid:
                        found.append(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    return found


class Sampler:
    """Samples the host every `interval_s` from start() to stop() in a thread of its own. The
    run's processes are added as they start; with `session`, every process of each one's
    session counts as the run's (Open MPI's ranks)."""

    def __init__(self, interval_s=0.25, cpus=None, session=False):
        self.interval_s = interval_s
        self.cpus = sorted(cpus) if cpus else sorted(os.sched_getaffinity(0))
        self.session = session
        self.own = os.getpid()
        self.pids = [self.own]  # the orchestrator's CPU is the run's, not another process's
        self.last_ticks = {}  # pid -> its last CPU ticks read (kept once it has gone)
        self.rows = []  # (monotonic time, busy, idle and iowait, steal, total, run, runnable)
        self.why_not = None if os.path.exists(STAT) else f"no {STAT} on this system"
        self._stop = threading.Event()
        self._thread = None

    def add(self, pid):
        self.pids.append(pid)
        if self._thread is None and self.why_not is None:
            self.sample()
            self._thread = threading.Thread(target=self._loop, daemon=True, name="hostwatch")
            self._thread.start()

    def _loop(self):
        while not self._stop.wait(self.interval_s):
            self.sample()

    def _run_ticks(self):
        pids = self.pids
        if self.session:
            pids = sorted({p for sid in self.pids for p in session_pids(sid)} | set(self.pids))
        for pid in pids:
            # the orchestrator's own, without its children: the workers it reaps are counted
            ticks = process_ticks(pid, children=pid != self.own)
            if ticks is not None:
                self.last_ticks[pid] = max(ticks, self.last_ticks.get(pid, 0))
        return sum(self.last_ticks.values())

    def sample(self):
        now = time.monotonic()
        read = read_stat(self.cpus)
        if read is None:
            self.why_not = f"{STAT} could not be read"
            return
        totals, runnable = read
        busy = sum(totals[f] for f in BUSY)
        self.rows.append(
            (
                now,
                busy,
                totals["idle"] + totals["iowait"],
                totals["steal"],
                sum(totals.values()),
                self._run_ticks(),
                runnable,
            )
        )

    def stop(self):
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self.sample()

    def record(self):
        """What the run's raw result keeps of the samples (bench.run.benchmark reads it)."""
        if self.why_not or len(self.rows) < 2:
            return {"available": False, "why": self.why_not or "the run ended before a sample"}
        return {
            "available": True,
            "interval_s": self.interval_s,
            "cpus": self.cpus,
            "hz": clock_ticks(),
            "rows": [list(row) for row in self.rows],
        }


MIN_SPAN_S = 1.0


def span(samples, timed):
    """The samples around the worker's timed windows (bench_shared.timing's, monotonic): from
    the last sample at or before the first window's start to the first at or after the last
    window's end (widened to MIN_SPAN_S where the run lasted that long), so that even a window
    shorter than the sampling interval is judged over whole intervals. Its seconds, the
    windows' own seconds, the CPU ticks over it (the machine's total, busy, the run's own
    processes', stolen) and the runnable tasks sampled."""
    rows = samples["rows"]
    if not timed:
        return None
    first, last = min(w["start"] for w in timed), max(w["end"] for w in timed)
    i = max([k for k, row in enumerate(rows) if row[0] <= first] or [0])
    j = min([k for k, row in enumerate(rows) if row[0] >= last] or [len(rows) - 1])
    # widened to MIN_SPAN_S where the samples allow: over a shorter span the per-process and
    # the machine's tick counts disagree by a few ticks, which are tens of percent of it
    while rows[j][0] - rows[i][0] < MIN_SPAN_S and (i > 0 or j < len(rows) - 1):
        i, j = max(i - 1, 0), min(j + 1, len(rows) - 1)
    a, b = rows[i], rows[j]
    if b[0] <= a[0]:
        return None
    inside = [row[6] for row in rows if a[0] <= row[0] <= b[0] and row[6] is not None]
    return {
        "seconds": round(b[0] - a[0], 4),
        "timed_seconds": round(sum(w["end"] - w["start"] for w in timed), 4),
        "windows": len(timed),
        "ticks": {
            name: b[column] - a[column]
            for name, column in (("total", 4), ("busy", 1), ("run", 5), ("steal", 3))
        },
        "runnable": {
            "median": statistics.median(inside) if inside else None,
            "max": max(inside) if inside else None,
            "samples": len(inside),
        },
    }


def figures(ticks):
    """Shares of the machine's CPU time over a span: steal (taken by the hypervisor), others
    (taken by processes not the run's) and others' counting noise. The machine's busy ticks
    are counted by sampling who runs at each tick, a process's own time exactly: where work
    comes in bursts shorter than a tick the two differ by about the square root of the busy
    ticks (a quiet 2-core VM showed 13 % "others" over 0.7 s, 2 % over 3 s); twice that is
    the margin a share must clear before it says anything."""
    total = ticks["total"]
    if total <= 0:
        return {"steal": 0.0, "others": 0.0, "others_noise": 0.0}
    return {
        "steal": round(ticks["steal"] / total, 4),
        "others": round(max(0, ticks["busy"] - ticks["run"]) / total, 4),
        "others_noise": round(2 * math.sqrt(max(ticks["busy"], 0)) / total, 4),
    }


def verdict(figures_, canary, thresholds):
    """(disturbed, [reasons]) by the declared thresholds (config `watch`)."""
    reasons = []
    if figures_["steal"] > thresholds["max_steal"]:
        reasons.append(
            f"the hypervisor took {figures_['steal']:.0%} of the CPU time (steal; at most "
            f"{thresholds['max_steal']:.0%})"
        )
    if figures_["others"] > thresholds["max_others"] + figures_.get("others_noise", 0.0):
        reasons.append(
            f"other processes took {figures_['others']:.0%} of the CPUs' time (at most "
            f"{thresholds['max_others']:.0%}, give or take the counts' "
            f"{figures_.get('others_noise', 0.0):.0%})"
        )
    slowdown = (canary or {}).get("slowdown")
    if slowdown is not None and slowdown > thresholds["max_canary_slowdown"]:
        reasons.append(
            f"the canary ran {slowdown:.0%} slower than this host's reference (at most "
            f"{thresholds['max_canary_slowdown']:.0%})"
        )
    return bool(reasons), reasons


THRESHOLDS = ("max_steal", "max_others", "max_canary_slowdown")


def state(samples, timed, canary, watch):
    """The result's host_state: the span of the timed windows and its figures, the canary,
    the thresholds, `disturbed` and why. `watch`: the config's (WatchConfig as a dict)."""
    thresholds = {k: watch[k] for k in THRESHOLDS}
    measured = span(samples, timed) if samples and samples.get("available") else None
    if measured is None:
        why = (samples or {}).get("why") or "no timed window between two samples"
        record = {"watched": False, "why": why, "canary": canary, "thresholds": thresholds}
        disturbed, reasons = verdict({"steal": 0.0, "others": 0.0}, canary, thresholds)
        return dict(record, disturbed=disturbed, reasons=reasons)
    record = {
        "watched": True,
        "source": STAT,
        "cpus": samples["cpus"],
        "hz": samples["hz"],
        "interval_s": samples["interval_s"],
        "span": measured,
        **figures(measured["ticks"]),
        "canary": canary,
        "thresholds": thresholds,
    }
    disturbed, reasons = verdict(record, canary, thresholds)
    return dict(record, disturbed=disturbed, reasons=reasons)
