"""A worker dies with its orchestrator: killed with SIGKILL (or crashed), the orchestrator
cannot kill its worker, which would otherwise run on and hold the CPU during later timings.

On Linux the kernel's parent-death signal does it: prctl(PR_SET_PDEATHSIG, SIGKILL) asks for
SIGKILL when the process that started the worker exits. Elsewhere there is no such signal and
the worker outlives a killed orchestrator (its timeout no longer applies)."""

import ctypes
import ctypes.util
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        pass
    return True


def die_with(parent_pid):
    """Ask for SIGKILL when parent_pid (the orchestrator, our parent) exits; exit at once
    when it has already gone. parent_pid None: nothing asked (run by hand)."""
    if parent_pid is None or not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent_pid and not _alive(parent_pid):  # gone before the request
        sys.stderr.write("worker: the orchestrator (pid %d) has exited; stopping\n" % parent_pid)
        os._exit(1)
