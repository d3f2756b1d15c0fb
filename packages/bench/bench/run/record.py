"""The result record of a run (result.json): derived statistics, validity, writing and
reading against its schema (result.schema.json beside this module)."""

import datetime
import functools
import json
import math
import platform
import re
import statistics
import sys
from pathlib import Path

from bench_shared import spec

from .. import files

# A last-epoch mean loss this many times a uniform guess's (ln of the number of classes) is
# a diverged run: a healthy one starts near ln(C) and falls.
DIVERGED = 3.0


def header(config, overrides, started, bench_version):
    """What a result says before the run starts: the schema, the composed config (and the
    overrides that made it), when, and which bench and orchestrator ran it."""
    head = {
        "schema_version": SCHEMA_VERSION,
        "config": config,
        "started": started,
        "bench_version": bench_version,
        "orchestrator": {
            "python": sys.version.split()[0],
            "executable": sys.executable,
            "platform": platform.platform(),
        },
    }
    if overrides is not None:
        head["overrides"] = overrides
    return head


def assemble(head, learned, ended, finished):
    """The result of a run, in one place: its header, what it learned on its way (tuning,
    host, worker, data, node), how it ended (the worker's raw result with its statistics, or
    the status and error of a refusal or failure) and when it finished."""
    return {"status": "failed", **head, **learned, **ended, "finished": finished}


def _median(values):
    return statistics.median(values) if values else None


def training_stats(raw, task):
    epochs = raw["timings"].get("epoch", [])
    if not epochs:
        return {}
    steady = epochs[1:]
    per_epoch = _median(steady) if steady else epochs[0]
    # every rank's examples: a data-parallel step is world_size batches
    world = (raw.get("distributed") or {}).get("world_size", 1)
    examples = raw["batches_per_epoch"] * task["batch_size"] * world
    batch_times = [t for epoch in raw.get("batch_seconds", [])[1:] for t in epoch]
    stats = {
        "train_seconds": sum(epochs),  # the 2018 table's figure: every epoch's loop
        "first_epoch_seconds": epochs[0],
        "steady_epoch_seconds": _median(steady),
        "steady_epoch_spread": (max(steady) - min(steady)) if len(steady) > 1 else None,
        "examples_per_second": examples / per_epoch,
        "steady_state_measured": bool(steady),
        "median_batch_seconds": _median(batch_times),
    }
    flops = spec.flops_per_example(task["name"], training=True, image_size=task.get("image_size"))
    stats["achieved_gflops"] = stats["examples_per_second"] * flops / 1e9
    stats.update(time_to_target(raw.get("curve") or [], raw.get("quality_target")))
    return stats


def time_to_target(curve, target):
    """{quality_target, target_reached, time_to_target_s, target_epoch}: the training seconds
    until the first evaluation at or above the target, and its epoch (None: not reached, or
    no target declared for the run's data)."""
    reached = (
        next((point for point in curve if point["accuracy"] >= target), None)
        if target is not None
        else None
    )
    return {
        "quality_target": target,
        "target_reached": None if target is None else reached is not None,
        "time_to_target_s": reached["train_seconds"] if reached else None,
        "target_epoch": reached["epoch"] if reached else None,
    }


def inference_stats(raw, task):
    seconds = raw["timings"].get("inference", [None])[-1]
    if seconds is None:
        return {}
    images = raw["images"]
    return {
        "inference_seconds": seconds,
        "warmup_seconds": sum(raw["timings"].get("warmup", [])),
        "seconds_per_1000_images": seconds / images * 1000,
        "images_per_second": images / seconds,
        "achieved_gflops": images
        / seconds
        * spec.flops_per_example(task["name"], training=False)
        / 1e9,
    }


def _finite(x):
    return isinstance(x, (int, float)) and math.isfinite(x)


def invalid_reason(raw, task):
    """Why a run the worker reports `ok` is not a valid measurement (a loss that became NaN or
    inf or diverged, a non-finite accuracy or output), or None."""
    if raw.get("status") != "ok":
        return None
    if task["kind"] == "train":
        losses = raw.get("losses") or []
        for epoch, loss in enumerate(losses, 1):
            if not _finite(loss):
                return f"the training loss became {loss} in epoch {epoch}"
        s = spec.TASKS[task["name"]]
        # a uniform guess: softmax over the classes, or 1/2 per label (multi-label)
        chance = math.log(2) if getattr(s, "num_labels", None) else math.log(s.num_classes)
        if losses and losses[-1] > DIVERGED * chance:
            return (
                f"the training loss diverged: {losses[-1]:.4g} in the last epoch, more "
                f"than {DIVERGED:g}x a uniform guess's {chance:.3f}"
            )
        if not _finite(raw.get("accuracy")):
            return f"the test accuracy is {raw.get('accuracy')}"
    elif not (raw.get("features") or {}).get("finite", True):
        return "the extracted features are not all finite"
    return None


def derive(raw, task, host_peak=None):
    """Statistics of an ok run; host_peak (bench.run.host_files.peak_record: this host's best
    dense-matmul FLOP/s at the run's precision, any framework) adds `host_utilisation`."""
    if raw.get("status") != "ok":
        return {}
    stats = (training_stats if task["kind"] == "train" else inference_stats)(raw, task)
    if raw.get("peak_flops") and "achieved_gflops" in stats:
        # achieved model FLOP/s over the framework's measured dense-matmul FLOP/s
        stats["utilisation"] = stats["achieved_gflops"] * 1e9 / raw["peak_flops"]
    if host_peak and "achieved_gflops" in stats:
        # ... and over the best any installed framework reaches on these cores
        stats["host_utilisation"] = stats["achieved_gflops"] * 1e9 / host_peak["flops"]
    return stats


def flatten(tree, prefix=""):
    """{"a": {"b": 1}} -> {"a.b": 1}: configs compared and tabulated key by key."""
    flat = {}
    for key, value in tree.items():
        if isinstance(value, dict) and value:
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


# result.json's layout; result.schema.json beside this module describes it. 2 added the
# worker's environment, the learning curve and the quality target; 3 the host's state during
# the timed windows and the round of a sweep; versions 1 and 2 still read
SCHEMA_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
SCHEMA = Path(__file__).resolve().parent / "result.schema.json"


@functools.cache
def _validator():
    import jsonschema

    schema = json.loads(SCHEMA.read_text())
    checker = jsonschema.FormatChecker()
    # jsonschema checks `date-time` only with an optional package; the schema's dates (started,
    # finished) order a history, so they are checked here, always
    checker.checks("date-time", raises=ValueError)(date_time)
    return jsonschema.Draft202012Validator(schema, format_checker=checker)


DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def date_time(value):
    """Whether value is an RFC 3339 date-time (what result.json writes: 2026-12-06T05:00:00+00:00);
    non-strings are the schema's `type` to judge."""
    if not isinstance(value, str):
        return True
    if not DATE_TIME.match(value):
        return False
    datetime.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    return True


def problem(result):
    """Why a result does not follow result.schema.json, in one bounded line naming the field,
    or None."""
    errors = sorted(_validator().iter_errors(result), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    error = errors[0]
    field = ".".join(map(str, error.absolute_path)) or "(the top level)"
    value = json.dumps(error.instance, default=str)
    if len(value) > 60:
        value = value[:57] + "..."
    message = error.message if len(error.message) < 120 else error.message[:117] + "..."
    if error.validator in ("type", "enum", "const", "minimum", "exclusiveMinimum", "format"):
        message = f"{value} is not valid ({error.validator}: {json.dumps(error.validator_value)})"
        if error.validator == "format" and error.validator_value == "date-time":
            message = message[:-1] + ", e.g. 2026-12-02T10:00:00+00:00)"
    return f"{field}: {message}" + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")


class _NotStrict(ValueError):
    pass


def _not_json(name):
    """json's hook for NaN, Infinity and -Infinity, which Python reads and JSON does not have:
    a figure that is not a finite number is refused where it is read."""
    raise _NotStrict(f"not strict JSON: {name} is not a number JSON can hold")


def load(path: Path):
    """A result.json as a dict; ValueError (one bounded line naming the field) when it is not
    one (NaN and Infinity are not JSON) or does not follow the schema. A result written before
    schema_version existed is read as version 1, whose fields it has; a version 1 result lacks
    the environment and curve. Commands read results through bench.run.results, which also
    re-derives their figures."""
    try:
        result = json.loads(Path(path).read_bytes(), parse_constant=_not_json)
    except _NotStrict as exc:
        raise ValueError(str(exc)) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"not JSON ({str(exc)[:100]})") from None
    if not isinstance(result, dict) or "status" not in result or "config" not in result:
        raise ValueError("not a Rosetta Bench result (no status or config)")
    if "schema_version" not in result:
        result = dict(result, schema_version=1)
    if result["schema_version"] not in READABLE_VERSIONS:
        raise ValueError(
            f"schema_version {result['schema_version']!r}: this bench reads "
            f"versions {', '.join(map(str, READABLE_VERSIONS))}"
        )
    why = problem(result)
    if why:
        raise ValueError(why)
    return result


def write(path: Path, result):
    """Whole or not at all, strict JSON (bench.files)."""
    files.write_json(path, result)
