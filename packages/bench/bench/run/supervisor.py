"""The one process supervisor: start a run's processes, stream their output, enforce the
timeout, kill them (each one's process group, or an MPI job's whole session), and say why the
run was cut short — for one worker, N ranks and an mpiexec job alike.

Waiting is a select() on two pipes, no polling: one written by a thread per process when it
exits, one by the signal machinery (bench.signals.deferred) when a signal arrives. Inside
deferred() a second SIGTERM (Slurm sends two at a time limit) or a Ctrl-C during the cleanup is
recorded, never raised, so the kill and the record always finish.
"""

import collections
import os
import select
import signal
import subprocess
import sys
import threading
import time

from bench_shared import progress as events

from .. import signals
from ..console import ProgressView
from . import hostwatch

TAIL_LINES = 60
# a process that died of a signal that ends runs (SIGTERM, SIGINT, SIGUSR2) while none has
# reached us yet: how long to wait for ours (scancel, a time limit and submitit's warning
# signal every process of the job step; Slurm's process tracking signals the deepest first)
SIGNAL_GRACE_S = 1.0
ENDING = {-signum for signum in signals.WHAT}  # the exit codes of processes those signals killed


def _pump(stream, sinks, tail, view=None):
    for line in iter(stream.readline, ""):
        event = events.parse(line) if view is not None else None
        if event is not None:
            view.handle(event)
            continue
        tail.append(line.rstrip("\n"))
        for sink in sinks:
            sink.write(line)
            sink.flush()
    stream.close()


def exit_in_words(code):
    """A process's exit code in words."""
    return f"died with signal {-code}" if code < 0 else f"exited with status {code}"


class Member:
    """One started process: its Popen, the tail of its output and its log."""

    def __init__(self, name, proc, tail, log, pumps):
        self.name, self.proc, self.tail, self.log, self.pumps = name, proc, tail, log, pumps

    @property
    def code(self):
        return self.proc.returncode


class Supervisor:
    """Processes started together and ended together.

    timeout_s: the whole run's limit. pending: bench.signals.deferred()'s Pending (a signal
    that arrives ends the run). together: a process that fails takes the others down (ranks in
    a collective would wait for it forever). check: called every check_every_s while the
    processes run, returns why the run must end now (an MPI rank's result saying it failed,
    while mpiexec waits in MPI_Finalize) or None. session: kill every process of each member's
    session, not only its process group (Open MPI starts each rank in a group of its own).
    subject: how a reason names the processes ("worker", "the workers", "mpiexec and its 2
    workers")."""

    def __init__(
        self,
        timeout_s,
        pending,
        subject="worker",
        together=True,
        check=None,
        check_every_s=0.5,
        session=False,
        watch_interval_s=None,
    ):
        self.timeout_s, self.pending, self.together = timeout_s, pending, together
        self.subject = subject  # what the reasons name: "worker", "the workers", ...
        self.check, self.check_every_s, self.session = check, check_every_s, session
        self.members = []
        self.watchers = []  # a thread per process, writing to the exits pipe when it exits
        self.view = ProgressView()
        # the host watched while the processes run (None: not watched)
        self.sampler = (
            hostwatch.Sampler(watch_interval_s, session=session) if watch_interval_s else None
        )
        self._exits_read, self._exits_write = os.pipe()

    def start(
        self, command, env, cwd, log_path, name="worker", echo=True, progress=True, cpus=None
    ):
        """Start one process (`name`: "rank 1") in a session of its own, pinned to `cpus`; its
        output goes to log_path and, with echo, to ours (progress events drawn, with
        progress)."""
        log = open(log_path, "w")
        try:
            proc = subprocess.Popen(
                command,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                text=True,
                env=env,
                cwd=cwd,
                start_new_session=True,
                bufsize=1,
                preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
            )
        except BaseException:
            log.close()
            raise
        tail = collections.deque(maxlen=TAIL_LINES)
        view = self.view if echo and progress else None
        pumps = [
            threading.Thread(
                target=_pump,
                daemon=True,
                args=(proc.stdout, [sys.stdout, log] if echo else [log], tail, view),
            ),
            threading.Thread(
                target=_pump,
                daemon=True,
                args=(proc.stderr, [sys.stderr, log] if echo else [log], tail),
            ),
        ]
        for pump in pumps:
            pump.start()
        member = Member(name, proc, tail, log, pumps)
        self.members.append(member)
        if self.sampler is not None:
            self.sampler.add(proc.pid)
        watcher = threading.Thread(target=self._watch, args=(proc,), daemon=True)
        watcher.start()
        self.watchers.append(watcher)
        return member

    def host_samples(self):
        """What the sampler saw (bench.run.hostwatch.Sampler.record), or None: not watched."""
        return self.sampler.record() if self.sampler is not None else None

    def _watch(self, proc):
        proc.wait()
        os.write(self._exits_write, b".")

    def _failed(self):
        if not self.together:
            return None
        for member in self.members:
            code = member.proc.poll()
            if code not in (None, 0):
                return member
        return None

    def _wait_for_signal(self, seconds):
        """A process died of a signal in signals.WHAT before ours arrived: give ours a moment."""
        if self.pending.wakeup is None:
            return
        deadline = time.monotonic() + seconds
        while not self.pending and time.monotonic() < deadline:
            select.select([self.pending.wakeup], [], [], deadline - time.monotonic())

    def wait(self):
        """Wait until every process has exited, or end them; the reason they were ended (None:
        they all exited by themselves). Always returns with every process reaped, its output
        read and its log closed."""
        try:
            return self._wait()
        finally:
            if self.sampler is not None:
                self.sampler.stop()
            self.kill()
            for member in self.members:
                for pump in member.pumps:
                    pump.join(timeout=10)
                member.log.close()
            self.view.close()
            for watcher in self.watchers:  # each returns at once: kill() reaped its process
                watcher.join()  # before the pipe closes: its number may be another file's next
            os.close(self._exits_read)
            os.close(self._exits_write)

    def _wait(self):
        deadline = time.monotonic() + self.timeout_s
        watched = [self._exits_read] + ([self.pending.wakeup] if self.pending.wakeup else [])
        next_check = time.monotonic() + self.check_every_s
        while True:
            if self.pending:
                return None  # the caller says "interrupted", knowing by which signal
            if all(m.proc.poll() is not None for m in self.members):
                if any(m.code in ENDING for m in self.members):
                    self._wait_for_signal(SIGNAL_GRACE_S)
                return None
            failed = self._failed()
            if failed:
                if failed.code in ENDING:
                    self._wait_for_signal(SIGNAL_GRACE_S)
                    if self.pending:
                        return None
                return f"{failed.name} {exit_in_words(failed.code)}; the other ranks were killed"
            now = time.monotonic()
            if self.check is not None and now >= next_check:
                reason = self.check()
                if reason:
                    return reason
                next_check = now + self.check_every_s
            if now >= deadline:
                return f"{self.subject} timed out after {self.timeout_s:g} s and {self.killed}"
            timeout = deadline - now
            if self.check is not None:
                timeout = min(timeout, max(0.0, next_check - now))
            readable, _, _ = select.select(watched, [], [], timeout)
            if self._exits_read in readable:
                os.read(self._exits_read, 4096)

    @property
    def killed(self):
        return "was killed" if self.subject == "worker" else "were killed"

    def interrupted(self):
        """The reason of a run a signal ended (self.pending says which)."""
        subject = "the worker" if self.subject == "worker" else self.subject
        return f"interrupted ({self.pending.what}); {subject} {self.killed}"

    def kill(self):
        """SIGKILL every member's process group (and, for an MPI job, its whole session) and
        reap it; harmless for processes that have exited."""
        for member in self.members:
            for pid in _session_members(member.proc.pid) if self.session else ():
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:  # the process and anything it started, even after it exited itself
                os.killpg(member.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for member in self.members:
            member.proc.wait()


def _session_members(sid):
    """Every process whose session is `sid` (read from /proc: Open MPI's ranks each lead a
    process group of their own inside mpiexec's session)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[3]) == sid:  # state, ppid, pgrp, session
            members.append(int(entry))
    return members
