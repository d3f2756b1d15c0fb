"""Errors the orchestrator reports as one line, before any worker starts."""


class BenchError(Exception):
    """A problem the user can fix; its message says what was asked, what exists, what to do."""

    status = "failed"


class UnsupportedError(BenchError):
    """A combination the framework or this machine cannot run."""

    status = "unsupported"


class EnvironmentNotFound(BenchError):
    """No interpreter with the framework's package was found."""


class DataError(BenchError):
    """A dataset that is missing, corrupt or cannot be prepared."""


class ConfigError(BenchError):
    """A config value the run cannot use (a zero or negative size, ...)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (kill, Slurm's scancel or time limit): handled like Ctrl-C."""
