"""Sizes checked before a worker starts: a zero or negative count, epoch, batch or timeout, or
a seed numpy cannot take, is a one-line error naming the option, never a silent "use the
default" (null means that) nor a traceback inside the worker."""

from ..errors import ConfigError


def _need(value, option, minimum=1, allow_none=False):
    if value is None and allow_none:
        return
    if value is None or value < minimum:
        raise ConfigError(
            f"{option}={value}: must be {minimum} or more"
            + (" (null keeps the task's value)" if allow_none else "")
        )


def check(cfg):
    """Every size of the composed config, before any data is prepared."""
    task, preset = cfg.task, cfg.preset
    if not 0 <= cfg.seed < 2**32:  # numpy's RandomState seeds every framework's draws
        raise ConfigError(f"seed={cfg.seed}: must be 0 to {2**32 - 1}")
    _need(task.batch_size, "task.batch_size")
    if task.kind == "train":
        _need(task.epochs, "task.epochs")
        _need(preset.epochs, "preset.epochs", allow_none=True)
        _need(preset.train_examples, "preset.train_examples", allow_none=True)
        _need(preset.test_examples, "preset.test_examples", allow_none=True)
    else:
        _need(task.num_batches, "task.num_batches")
        _need(task.warmup_passes, "task.warmup_passes", minimum=0)
        _need(preset.inference_batches, "preset.inference_batches", allow_none=True)
    if not preset.timeout_s > 0:
        raise ConfigError(f"preset.timeout_s={preset.timeout_s}: must be more than 0 seconds")
    for option in ("timeout_s", "attempts"):
        value = getattr(cfg.data, option, None)
        if value is not None and not value > 0:
            raise ConfigError(f"data.{option}={value}: must be more than 0")
    check_watch(cfg.watch, cfg.preset)


def check_watch(watch, preset=None):
    """The host watch's settings (bench.run.hostwatch, bench.run.canary): ConfigError, one
    line, for one it cannot use."""
    if not watch.interval_s > 0:
        raise ConfigError(f"watch.interval_s={watch.interval_s}: must be more than 0")
    for name in ("canary_s", "max_steal", "max_others", "max_canary_slowdown"):
        value = getattr(watch, name)
        if value is not None and not value >= 0:
            raise ConfigError(f"watch.{name}={value}: must be 0 or more")
    if preset is not None and not preset.canary_s >= 0:
        raise ConfigError(f"preset.canary_s={preset.canary_s}: must be 0 or more")


def check_batches(cfg, prepared):
    """A training set smaller than one batch trains nothing: refused, naming both sizes."""
    if cfg.task.kind != "train":
        return
    examples = prepared["limits"]["train"]
    batch = cfg.task.batch_size * cfg.devices  # the global batch of a data-parallel run
    if examples < batch:
        per_device = f" x devices={cfg.devices}" if cfg.devices > 1 else ""
        raise ConfigError(
            f"{examples} training examples make no complete batch of task.batch_size="
            f"{cfg.task.batch_size}{per_device}: raise preset.train_examples (now "
            f"{cfg.preset.train_examples}) or lower task.batch_size"
        )
