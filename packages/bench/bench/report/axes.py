"""A second axis within one framework: a configuration that differs from another only in its
precision, its tuning or one framework option is compared with the one that has the axis's
declared baseline value — fp32, untuned (`tuned=false`), the option's default — by the
report's metric and by the time to the quality target, each ratio with its interval and the
quality check of bench.report.ratios ("bf16 ran 1.35× (1.20–1.50) faster than fp32"; "no
difference shown"; "not compared: below its quality target").

An option's default is what the framework's config declares for the task: first as the results
themselves recorded it (a run whose command line did not set the option ran its default, task
tweaks of conf/task_framework included), else conf/framework/<fw>.yaml's `options` with
conf/task_framework/<task>_<fw>.yaml's `framework.options` over them.
"""

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from omegaconf import OmegaConf

from .. import conf_dir
from ..run import record
from . import ratios
from .collection import INCIDENTAL, Configuration, Grid, matches
from .metrics import METRICS
from .tables import TOO_SPREAD, cell, heading, markdown_table, too_spread

BASELINE_PRECISION = "fp32"
OPTION = "framework.options."


@dataclass
class AxisComparison:
    """A configuration against its twin with the axis's baseline value."""

    axis: str  # "precision", "tuned" or "framework.options.<name>"
    value: str  # this configuration's value, as shown ("bf16", "true", "False")
    baseline_value: str
    configuration: Configuration
    baseline: Configuration
    speed: Optional[ratios.Comparison]  # by the report's metric
    to_target: Optional[ratios.Comparison]  # by the time to the quality target

    @property
    def setting(self):
        return _setting(self.axis, self.value)

    @property
    def baseline_setting(self):
        return _setting(self.axis, self.baseline_value)

    def verdict(self) -> str:
        """One phrase: `bf16 ran 1.35× (1.20–1.50) faster than fp32`, `no difference shown`,
        `n=1: no interval`, `not compared: bf16 below target`."""
        c = self.speed
        if c is None:
            return "no figure on one side"
        if c.verdict == ratios.NOT_COMPARED:
            return "not compared: " + c.why_not(self.setting, self.baseline_setting)
        r = c.ratio
        if c.verdict == ratios.NO_DIFFERENCE:
            return f"no difference shown ({r.ratio:.2f}×, {r.interval_text()})"
        if c.verdict == ratios.TIE:
            return f"a tie ({r.ratio:.2f}×, {r.interval_text()})"
        if c.verdict == ratios.NO_INTERVAL:
            return f"{r.ratio:.2f}× the baseline's speed (n=1: no interval)"
        if c.verdict == ratios.FASTER:
            return f"{self.setting} ran {r.text()} faster than {self.baseline_setting}"
        slower = ratios.Ratio(1 / r.ratio, 1 / r.high, 1 / r.low, r.runs)
        return f"{self.setting} ran {slower.text()} slower than {self.baseline_setting}"


def _setting(axis, value):
    return f"{axis.removeprefix(OPTION)}={value}"


def _key(run, drop, composed=False):
    """The run's configuration without the axis's keys (`drop`: prefixes), on its hardware;
    `composed`: from the composed config (a tuned run without its profile's values)."""
    if composed:
        flat = record.flatten(run.result["config"])
        items = (
            (k, json.dumps(v, sort_keys=True))
            for k, v in flat.items()
            if not matches(k, INCIDENTAL)
        )
    else:
        items = run.identity
    return (
        tuple(sorted((k, v) for k, v in items if not matches(k, drop))),
        run.hardware,
        run.hostname,
    )


@functools.cache
def _declared_options(framework, task):
    """conf/framework/<fw>.yaml's options with conf/task_framework/<task>_<fw>.yaml's over them
    ({} where the framework has no config here)."""
    conf = Path(conf_dir())
    options = {}
    for path, keys in (
        (conf / "framework" / f"{framework}.yaml", ("options",)),
        (conf / "task_framework" / f"{task}_{framework}.yaml", ("framework", "options")),
    ):
        if not path.is_file():
            continue
        node = OmegaConf.to_container(OmegaConf.load(path))
        for key in keys:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict):
            options.update(node)
    return options


def _overridden(run, name):
    return any(
        o.lstrip("+").split("=", 1)[0] == OPTION + name for o in run.result.get("overrides") or []
    )


def option_default(runs, framework, task, name):
    """(True, the default) of framework option `name` for the task, or (False, None)."""
    for run in runs:
        if (
            (run.framework, run.task) == (framework, task)
            and not _overridden(run, name)
            and "overrides" in run.result
        ):
            options = run.result["config"]["framework"].get("options") or {}
            if name in options:
                return True, options[name]
    declared = _declared_options(framework, task)
    return (name in declared), declared.get(name)


def _axes(grid: Grid):
    """[(axis, value of a configuration, its baseline value, the keys the axis drops,
    composed)]: precision, tuned and every framework option some configuration sets."""
    options = sorted(
        {k for c in grid.configurations for k, _ in c.first.identity if k.startswith(OPTION)}
    )
    return [
        (
            "precision",
            lambda c: c.first.precision,
            lambda c: BASELINE_PRECISION,
            ("precision",),
            False,
        ),
        (
            "tuned",
            lambda c: bool((c.first.result["config"]).get("tuned")),
            lambda c: False,
            ("tuned",),
            True,
        ),
    ] + [
        (
            key,
            functools.partial(_option_value, key),
            functools.partial(_option_base, grid, key),
            (key,),
            False,
        )
        for key in options
    ]


def _option_value(key, c):
    value = dict(c.first.identity).get(key)
    return None if value is None else json.loads(value)


def _option_base(grid, key, c):
    found, default = option_default(grid.runs, c.first.framework, c.task, key.removeprefix(OPTION))
    return default if found else _UNKNOWN


_UNKNOWN = object()


def pairs(grid: Grid):
    """[AxisComparison] for every configuration whose twin with the baseline value of one axis
    is in the grid."""
    found = []
    for axis, value_of, base_of, drop, composed in _axes(grid):
        twins = {}
        for c in grid.configurations:
            if c.status == "ok" and value_of(c) == base_of(c):
                twins.setdefault(_key(c.first, drop, composed), c)
        for c in grid.configurations:
            base = base_of(c)
            if base is _UNKNOWN or value_of(c) == base or c.status != "ok":
                continue
            twin = twins.get(_key(c.first, drop, composed))
            if twin is None or twin is c:
                continue
            speed = ratios.compare(grid.metric, c, twin)
            to_target = None
            if c.first.kind == "train" and grid.metric.name != "time_to_target":
                to_target = ratios.compare(METRICS["time_to_target"], c, twin)
            found.append(
                AxisComparison(axis, _text(value_of(c)), _text(base), c, twin, speed, to_target)
            )
    order = {"precision": 0, "tuned": 1}
    return sorted(
        found,
        key=lambda a: (
            a.configuration.task,
            a.configuration.first.framework,
            order.get(a.axis, 2),
            a.axis,
            a.configuration.row,
            a.value,
        ),
    )


def _text(value):
    return str(value).lower() if isinstance(value, bool) else str(value)


def _target_text(found: AxisComparison):
    c = found.to_target
    if c is None:
        return ""
    if c.verdict == ratios.NOT_COMPARED:
        return "not compared"
    return c.ratio.text() + (
        " (no difference shown)"
        if c.verdict == ratios.NO_DIFFERENCE
        else " (a tie)"
        if c.verdict == ratios.TIE
        else ""
    )


def rows(found, metric):
    """The section's table rows: framework, task, setting, against, the two cells, the
    speed ratio, the time-to-target ratio, the verdict."""
    return [
        [
            a.configuration.row,
            heading(a.configuration.task, _column(a)),
            a.setting,
            a.baseline_setting,
            cell(a.configuration, metric),
            cell(a.baseline, metric),
            "" if a.speed is None else a.speed.ratio.text(),
            _target_text(a),
            a.verdict(),
        ]
        for a in found
    ]


def _column(a):
    """The column without the axis's own value (a precision column names its precision)."""
    column = a.configuration.column
    if a.axis == "precision":
        column = " ".join(w for w in column.split() if w != a.value)
    return column


HEADER = [
    "framework",
    "task",
    "setting",
    "against",
    "this",
    "baseline",
    "speed this / baseline",
    "time to target this / baseline",
    "verdict",
]


def markdown(found, metric) -> str:
    if not found:
        return ""
    return (
        f"Within each framework, each setting against the declared baseline (precision "
        f"fp32, tuned=false, an option's default for the task), by {metric.title} and by "
        f"the time to the quality target: how many times faster (> 1) the setting ran, "
        f"with the ratio's 95 % interval (a seeded bootstrap over the repeats). A setting "
        f"or baseline below its quality target or at chance is not compared."
        + (
            f" {TOO_SPREAD}: its runs lie further apart than `python -m bench check` lets a "
            f"bundle rank."
            if any(too_spread(c, metric) for f in found for c in (f.configuration, f.baseline))
            else ""
        )
        + "\n\n"
        + markdown_table(HEADER, rows(found, metric))
        + "\n"
    )
