"""The signals that end a run, handled in one place: SIGINT (Ctrl-C), SIGTERM (kill, scancel,
Slurm's time limit) and SIGUSR2 (submitit asks Slurm for it before the time limit).

`install()`: each raises errors.Interrupted in the main thread, so that a long step (data
preparation, a download, Hydra) stops where it is. `deferred()`: inside it a signal is
recorded, not raised, for code that must finish what it started whatever arrives meanwhile —
the supervisor killing its workers and the run writing its result. Slurm sends SIGTERM twice,
about 10 ms apart, at a time limit: the second must not cut the cleanup the first began.
"""

import contextlib
import os
import signal
import threading

from .errors import Interrupted

WHAT = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM", signal.SIGUSR2: "time limit"}


class Pending:
    """The first signal received inside deferred(), or None."""

    def __init__(self):
        self.what = None
        self.wakeup = None  # a pipe's read end that becomes readable when a signal arrives

    def __bool__(self):
        return self.what is not None


_pending = []  # the innermost deferred() block's Pending; empty: signals raise


def _handler(signum, frame):
    what = WHAT.get(signum, f"signal {signum}")
    if _pending:
        if _pending[-1].what is None:
            _pending[-1].what = what
        return
    raise Interrupted(what)


def ignore():
    """Every signal in WHAT ignored from now on: for a process that has recorded its
    interruption and is exiting (Python restores the default action of its own handlers
    when it finalises, so a second SIGTERM then would turn exit status 143 into a kill)."""
    if _main_thread():
        for signum in WHAT:
            signal.signal(signum, signal.SIG_IGN)


def _main_thread():
    return threading.current_thread() is threading.main_thread()


def install():
    """Interrupted for every signal in WHAT from now on (main thread only: elsewhere Python
    cannot install handlers, and the main thread's stay)."""
    if _main_thread():
        for signum in WHAT:
            signal.signal(signum, _handler)


@contextlib.contextmanager
def deferred():
    """Signals recorded, not raised, inside the block; yields the Pending that says which
    arrived first (its `wakeup` fd becomes readable then, for a select()). The caller decides
    what a pending signal means and raises it itself (Interrupted(pending.what))."""
    pending = Pending()
    if not _main_thread():  # no handlers here: nothing to defer
        yield pending
        return
    previous = {signum: signal.signal(signum, _handler) for signum in WHAT}
    read, write = os.pipe()
    os.set_blocking(write, False)
    pending.wakeup = read
    old_fd = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    _pending.append(pending)
    try:
        yield pending
    finally:
        _pending.pop()
        signal.set_wakeup_fd(old_fd)
        os.close(read)
        os.close(write)
        if not _pending and pending.what:
            # outermost, and a signal arrived: the process is ending (its caller raises
            # Interrupted once all is recorded), and another signal on the way out (Slurm's
            # second SIGTERM) must not cut that exit short with a traceback
            ignore()
        elif not _pending:  # outermost: the handlers that were there before
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        elif pending.what and _pending[-1].what is None:
            _pending[-1].what = pending.what  # an enclosing block learns of it too
