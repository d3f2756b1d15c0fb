"""Errors the orchestrator reports as one line, before any worker starts, and the interruption
(a signal) that stops a run or a sweep."""


class BenchError(Exception):
    """A problem the user can fix; its message says what was asked, what exists, what to do."""

    status = "failed"


class UnsupportedError(BenchError):
    """A combination the framework or this machine cannot run."""

    status = "unsupported"


class EnvironmentNotFound(BenchError):
    """The framework's environment (or a system package it needs) is not installed here: the
    message names the command that builds it."""

    status = "not_installed"


class DataError(BenchError):
    """A dataset that is missing, corrupt or cannot be prepared."""


class ConfigError(BenchError):
    """A config value the run cannot use (a zero or negative size, ...)."""


class Interrupted(KeyboardInterrupt):
    """A signal that ends the run (bench.signals): Ctrl-C, SIGTERM (kill, scancel, a time
    limit) or submitit's warning that the time limit is near; `what` says which."""

    EXIT = {"Ctrl-C": 130}  # a shell's 128 + SIGINT; the others 128 + SIGTERM

    def __init__(self, what="Ctrl-C"):
        super().__init__(what)
        self.what = what

    @property
    def exit_status(self):
        return self.EXIT.get(self.what, 143)
