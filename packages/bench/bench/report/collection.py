"""Result files as flat records, and repeated runs of one configuration grouped into one
table cell (median and spread): what the report, the charts and the baseline comparison read.

A configuration is the composed config (less what only says where files live or how data was
fetched) on one kind of hardware. The table places it by framework (row), task and
hardware/precision (column); any other setting that differs between configurations that
would share a cell (a framework option, a task hyperparameter) is added to the row's name.
What every configuration shares (the hardware, the precision, the preset, the data) is named
once, in the table's `uniform` settings, and not in every column's label.

A report reads the runs that ran (ok, failed, invalid); runs a signal cut short and runs
refused before any worker started (unsupported, not_installed) are left out unless asked for,
and the report says how many it left out.
"""

import collections
import datetime
import json
import re
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from bench_shared import spec

from ..run import record, results
from .metrics import Metric, Summary, headline

TASKS = tuple(spec.TASKS)  # SPEC.md's order, DeepLearningFrameworks' column order
# keys that say where things are or how data was fetched, not what was measured; and `seed`:
# runs that differ only in it are repeats (`-m seed=0,1,2`), one cell with their median
INCIDENTAL = (
    "seed",
    "repeat",
    "sweep",
    "redo",
    "comparison",
    "rounds",
    "round",
    "watch",
    "framework.python",
    "framework.display_name",
    "framework.package",
    "framework.module",
    "framework.nox_session",
    "framework.capabilities",
    "framework.option_choices",
    "framework.speed_variables",
    "framework.test_overrides",
    "framework.slow_tests",
    "framework.tuning",
    "device.index",
    "data.cache_dir",
    "data.verify",
    "data.archive",
    "data.timeout_s",
    "data.attempts",
    "data.cifar10",
    "data.imdb",
    "data.chestxray14",
    "preset.timeout_s",
    "preset.canary_s",
    "task.description",
    "precision.description",
    "init.description",
    # what verify judges a framework by, not what a run measured
    "precision.output_tolerance",
    "precision.train_tolerance",
    "precision.task_train_tolerance",
    "precision.agreement",
)
# keys with their own place in the table (row, task, column)
PLACED = (
    "framework.name",
    "task.name",
    "task.kind",
    "task.dataset",
    "device.name",
    "precision.name",
    "preset.name",
    "data.name",
)
# the statuses of runs refused before any worker started: no measurement, left out of a
# report's tables unless asked for (`report --status all`)
REFUSED = ("unsupported", "not_installed")
RAN = ("ok", "failed", "invalid")  # what a report shows by default (and `interrupted` if asked)


def matches(key, prefixes):
    return any(key == p or key.startswith(p + ".") for p in prefixes)


def cpu_label(host):
    """'Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz' -> 'Intel Xeon Platinum 8375C, 2 CPUs'."""
    name = re.sub(r"\((R|TM|tm)\)|\bCPU\b|@.*$", "", host.get("cpu") or "CPU")
    name = " ".join(name.split()) or "CPU"
    cpus = host.get("cpu_affinity") or host.get("cpu_count")
    return f"{name}, {cpus} CPUs" if cpus else name


def hardware_label(config, host):
    """What the run ran on: the GPU model for device=gpu, else the CPU model and its CPUs."""
    if config["device"]["name"] == "gpu":
        gpus = host.get("gpus") or []
        index = config["device"].get("index", 0) or 0
        return gpus[index]["name"] if index < len(gpus) else "GPU"
    return cpu_label(host)


@dataclass
class Result:
    """One result.json, flattened to what tables and charts need."""

    path: Path
    result: dict
    status: str
    task: str
    kind: str  # "train" or "inference"
    framework: str
    display_name: str
    device: str
    hardware: str
    precision: str
    preset: str
    data: str
    hostname: str
    identity: tuple  # ((key, value as JSON), ...): the configuration, for grouping repeats
    accuracy: Optional[float]
    date: str  # when it finished (ISO 8601), or ""
    commit: str  # the checkout's git commit, or ""
    # the host disturbed its timed windows (host_state, schema 3): out of the statistics
    disturbed: bool = False
    # (the sweep's own name, the round) of a sweep in rounds (config.round), or None
    round: Optional[tuple] = None

    def value(self, metric: Metric) -> Optional[float]:
        return metric.value(self.result, self.kind) if self.status == "ok" else None

    @property
    def host_reasons(self):
        """Why the host disturbed the run (its host_state's reasons), [] when it did not."""
        return list((self.result.get("host_state") or {}).get("reasons") or [])

    @classmethod
    def from_result(cls, path: Path, result):
        c, host = result["config"], result.get("host") or {}
        kind = c["task"].get("kind", "train")
        flat = record.flatten(c)
        flat.setdefault("tuned", False)  # results from before the flag: untuned runs
        # a tuned run is the configuration that ran: its profile's values over the composed
        tuning = result.get("tuning") or {}
        flat.update({f"framework.options.{k}": v for k, v in tuning.get("options", {}).items()})
        flat.update({f"framework.env.{k}": v for k, v in tuning.get("env", {}).items()})
        identity = tuple(
            sorted(
                (k, json.dumps(v, sort_keys=True))
                for k, v in flat.items()
                if not matches(k, INCIDENTAL)
            )
        )
        return cls(
            path=path,
            result=result,
            status=result["status"],
            task=c["task"]["name"],
            kind=kind,
            framework=c["framework"]["name"],
            display_name=c["framework"].get("display_name") or c["framework"]["name"],
            device=c["device"]["name"],
            hardware=hardware_label(c, host),
            precision=c["precision"]["name"],
            preset=c["preset"]["name"],
            data=c["data"]["name"],
            hostname=host.get("hostname") or "",
            identity=identity,
            accuracy=result.get("accuracy"),
            date=result.get("finished") or _modified(path),
            commit=host.get("git_commit") or "",
            disturbed=bool((result.get("host_state") or {}).get("disturbed")),
            round=_round_of(c),
        )


def _round_of(config):
    """(sweep, round index) of a run a sweep placed in rounds, or None."""
    place = config.get("round") or {}
    if place.get("order") != "rounds" or place.get("index") is None or not place.get("sweep"):
        return None
    return place["sweep"], place["index"]


def _modified(path):
    """A result's file time, for results that do not record when they finished."""
    try:
        stamp = Path(path).stat().st_mtime
    except OSError:
        return ""
    return datetime.datetime.fromtimestamp(stamp, datetime.timezone.utc).isoformat(
        timespec="seconds"
    )


def read(paths, command="report"):
    """(the runs of every result file found, whatever their status, each file once; the
    Reading: what was left out and why). Files no command may use (bench.run.results) and
    duplicates are said in one bounded line each, on stderr, and left out."""
    reading = results.read(paths)
    for path, exc in reading.unreadable:
        print(f"{command}: skipping {path}: {exc}", file=sys.stderr)
    if reading.duplicates:
        print(f"{command}: {reading.duplicates_text()}", file=sys.stderr)
    return [Result.from_result(path, result) for path, result in reading.results], reading


def wanted_statuses(interrupted=False, every=False):
    """The statuses a report shows: RAN, `interrupted` when asked, every one with `every`."""
    if every:
        return RAN + ("interrupted",) + REFUSED
    return RAN + (("interrupted",) if interrupted else ())


def select(runs, statuses):
    """(the runs whose status is in `statuses`, Counter of the others' statuses)."""
    kept = [r for r in runs if r.status in statuses]
    return kept, collections.Counter(r.status for r in runs if r.status not in statuses)


def left_out_text(left_out) -> str:
    """`1 interrupted run (--interrupted includes it), 2 refused (1 unsupported, 1
    not_installed; --status all includes them)`, the inference runs a training metric leaves
    out; or ""."""
    parts = []
    if left_out.get("interrupted"):
        n = left_out["interrupted"]
        parts.append(
            f"{n} interrupted run{'s' if n > 1 else ''} (--interrupted includes "
            f"{'them' if n > 1 else 'it'})"
        )
    if left_out.get("inference"):
        n = left_out["inference"]
        parts.append(
            f"{n} inference run{'s' if n > 1 else ''} (--metric time_to_target ranks training runs)"
        )
    refused = {s: left_out[s] for s in REFUSED if left_out.get(s)}
    if refused:
        counts = ", ".join(f"{n} {s}" for s, n in refused.items())
        parts.append(
            f"{sum(refused.values())} refused before running ({counts}; --status all includes them)"
        )
    return ", ".join(parts)


def collect(paths, interrupted=False, every=False):
    """The runs of every result file found that a report shows (RAN; runs a signal cut short
    with `interrupted`; every status with `every`); unreadable files and duplicates are
    reported and left out."""
    return select(read(paths)[0], wanted_statuses(interrupted, every))[0]


def _median(values):
    return statistics.median(values) if values else None


@dataclass
class Configuration:
    """The runs of one configuration: one table cell."""

    key: tuple
    runs: list
    row: str = ""
    column: str = ""

    @property
    def first(self) -> Result:
        return self.runs[0]

    @property
    def task(self):
        return self.first.task

    @property
    def ok(self):
        return [r for r in self.runs if r.status == "ok"]

    @property
    def failed(self):
        return [r for r in self.runs if r.status == "failed"]

    @property
    def invalid(self):
        """Runs that finished with a NaN, inf or diverged loss: no valid measurement."""
        return [r for r in self.runs if r.status == "invalid"]

    @property
    def status(self):
        """ok when any run is; else invalid, failed when any run is; else unsupported."""
        if self.ok:
            return "ok"
        if self.invalid:
            return "invalid"
        return "failed" if self.failed or not self.runs else self.first.status

    @property
    def measured(self):
        """The ok runs the host did not disturb: the runs the statistics are made of."""
        return [r for r in self.ok if not r.disturbed]

    @property
    def disturbed(self):
        """The ok runs the host disturbed (host_state): kept, flagged, out of the statistics."""
        return [r for r in self.ok if r.disturbed]

    def values(self, metric: Metric):
        """The undisturbed ok runs' values of a metric (those that have it)."""
        return [v for v in (r.value(metric) for r in self.measured) if v is not None]

    def by_round(self, metric: Metric):
        """{(sweep, round): value} of the undisturbed ok runs a sweep placed in rounds."""
        found = {}
        for run in self.measured:
            value = run.value(metric)
            if run.round is not None and value is not None:
                found[run.round] = value
        return found

    @property
    def tie_band(self):
        """The tie band its runs were swept with (config.rounds.tie_band), else the default."""
        from .. import paired

        band = ((self.first.result.get("config") or {}).get("rounds") or {}).get("tie_band")
        return band if isinstance(band, (int, float)) and band > 0 else paired.TIE_BAND

    def summary(self, metric: Metric) -> Optional[Summary]:
        """Median, spread and count of the ok runs' values, or None."""
        return Summary.of(self.values(metric))

    @property
    def accuracy(self):
        return _median([r.accuracy for r in self.ok if r.accuracy is not None])


def configuration_key(run: Result, by_host=False):
    return (run.identity, run.hardware) + ((run.hostname,) if by_host else ())


def group(runs, by_host=False):
    """Repeated runs of one configuration together, in the order first seen."""
    groups = {}
    for run in runs:
        key = configuration_key(run, by_host)
        groups.setdefault(key, Configuration(key, [])).runs.append(run)
    return list(groups.values())


@dataclass
class Grid:
    """Configurations placed in DeepLearningFrameworks' layout: rows (framework, with a variant
    when one is needed to tell configurations apart) × tasks × columns (hardware, precision,
    ...)."""

    runs: list
    by_host: bool = False
    metric_name: str = "auto"  # metrics.CHOICES: what the cells show
    left_out: dict = field(default_factory=dict)  # status -> runs of it not in the grid
    configurations: list = field(init=False)
    rows: list = field(init=False)
    columns: dict = field(init=False)  # task -> [column labels]
    cells: dict = field(init=False)  # (row, task, column) -> Configuration
    uniform: dict = field(init=False)  # hardware/precision/preset/data/host every column shares
    display_names: dict = field(init=False)  # row -> the framework's display name
    metric: Metric = field(init=False)

    def __post_init__(self):
        trained = [r for r in self.runs if r.kind == "train" and r.status == "ok"]
        steady = not trained or any(steady_state(r) for r in trained)
        self.metric = headline({r.preset for r in self.runs}, self.metric_name, steady)
        self.configurations = group(self.runs, self.by_host)
        self._label_columns()
        self._label_rows()
        self.cells = {(c.row, c.task, c.column): c for c in self.configurations}
        self.display_names = {c.row: c.first.display_name for c in self.configurations}
        self.rows = sorted({c.row for c in self.configurations}, key=str.lower)
        tasks = sorted(
            {c.task for c in self.configurations},
            key=lambda t: (TASKS.index(t) if t in TASKS else len(TASKS), t),
        )
        self.columns = {
            t: sorted({c.column for c in self.configurations if c.task == t}) for t in tasks
        }

    def ordered(self):
        """The configurations in the table's order: rows, then tasks, then columns."""
        rows = {row: i for i, row in enumerate(self.rows)}
        tasks = {task: i for i, task in enumerate(self.columns)}
        return sorted(
            self.configurations,
            key=lambda c: (rows[c.row], tasks[c.task], self.columns[c.task].index(c.column)),
        )

    def _column_parts(self, c):
        run = c.first
        parts = {
            "hardware": run.hardware,
            "precision": run.precision,
            "data": run.data,
            "preset": run.preset,
        }
        if self.by_host:
            parts["host"] = run.hostname
        return parts

    def _label_columns(self):
        parts = [self._column_parts(c) for c in self.configurations]
        names = list(dict.fromkeys(k for p in parts for k in p))  # _column_parts' order
        varying = [k for k in names if len({p[k] for p in parts}) > 1]
        self.uniform = {k: parts[0][k] for k in names if k not in varying} if parts else {}
        for c, p in zip(self.configurations, parts):
            c.column = " ".join(
                p[k] if k in ("hardware", "precision", "host") else f"{k}={p[k]}" for k in varying
            )

    def _label_rows(self):
        # keys that differ between configurations that would otherwise share a cell
        cells, variant_keys = {}, {}
        for c in self.configurations:
            cells.setdefault((c.first.framework, c.task, c.column), []).append(c)
        for (framework, _, _), members in cells.items():
            if len(members) < 2:
                continue
            values = [dict(m.first.identity) for m in members]
            keys = {k for v in values for k in v if not matches(k, PLACED) and k != "twin"}
            variant_keys.setdefault(framework, set()).update(
                k for k in keys if len({v.get(k) for v in values}) > 1
            )
        frameworks = {}  # display name -> framework names: two frameworks, two rows
        for c in self.configurations:
            frameworks.setdefault(c.first.display_name, set()).add(c.first.framework)
        for c in self.configurations:
            identity = dict(c.first.identity)
            variant = [
                f"{k.removeprefix('framework.options.')}={_show(identity.get(k))}"
                for k in sorted(variant_keys.get(c.first.framework, ()))
            ]
            name = c.first.display_name
            if len(frameworks[name]) > 1:
                name += f" ({c.first.framework})"
            c.row = name + (f" [{', '.join(variant)}]" if variant else "")
            if identity.get("twin", "null") != "null":  # the A/A control's second name
                c.row += f" (A/A {json.loads(identity['twin'])})"


def _show(value_json):
    return "-" if value_json is None else str(json.loads(value_json))


def steady_state(run: Result) -> bool:
    """Whether a training run measured a steady state (two epochs or more); an inference run,
    and a result from before the flag, count as having one."""
    if run.kind != "train":
        return True
    return (run.result.get("stats") or {}).get("steady_state_measured", True) is not False


def uniform_text(uniform) -> str:
    """`Intel Xeon Gold 6148, 8 CPUs, fp32, data synthetic, preset smoke`: what every run of a
    table shares, named once."""
    parts = []
    for key, value in uniform.items():
        parts.append(value if key in ("hardware", "precision") else f"{key} {value}")
    return ", ".join(parts)
