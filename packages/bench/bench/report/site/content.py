"""The page's data, apart from the code: the results table in the seed's layout (framework rows;
per task and hardware/precision the report's metric, how many times slower than the column's
fastest row, and the accuracy), each host's environment, and `bench verify`'s deviations.
Plain records; bench.report.site.render writes them."""

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .. import quality
from ..collection import Grid
from ..metrics import Summary
from ..tables import NOT_OK, cell, number, relative, title

NOT_RUN = "not run"


@dataclass
class Cell:
    """One configuration in the table. status: ok, or the runs' status by its own name (failed,
    unsupported, invalid, ...), or `not run`."""

    status: str
    summary: Optional[Summary] = None  # the metric's median, spread and count
    relative: str = ""  # times slower than the column's fastest row, with its interval
    accuracy: Optional[float] = None
    note: str = ""  # the error of a failed run, repeats that failed
    figure: str = ""  # the figure as the markdown table writes it (marks included)
    relative_value: Optional[float] = None  # the × as a number, to sort by

    @property
    def value(self):
        return self.summary.median if self.summary else None

    @property
    def time_text(self):
        if self.status != "ok":
            return NOT_OK.get(self.status, self.status)
        return self.figure or (self.summary.text(number) if self.summary else "")

    @property
    def accuracy_text(self):
        return "" if self.accuracy is None or self.status != "ok" else f"{100 * self.accuracy:.1f}"


@dataclass
class Column:
    task: str
    label: str  # hardware and precision (and what else varies)
    kind: str  # train or inference

    @property
    def task_title(self):
        return title(self.task)

    unit: str = ""  # the metric's unit for this task


@dataclass
class ResultsTable:
    columns: list  # [Column]
    rows: list  # [(row label, [Cell per column])]
    uniform: dict  # what every run shares (preset, data, ...)


def cell_of(grid: Grid, row, column) -> Cell:
    configuration = grid.cells.get((row, column.task, column.label))
    if configuration is None:
        return Cell(NOT_RUN)
    status = configuration.status
    notes = [r.result.get("error") or "" for r in configuration.runs if r.status != "ok"]
    if status != "ok":
        return Cell(status, note="; ".join(n for n in notes if n)[:500])
    ok = configuration.ok
    notes = [
        f"{len(configuration.runs) - len(ok)} of {len(configuration.runs)} runs not ok"
        if len(ok) < len(configuration.runs)
        else ""
    ]
    q = quality.of(configuration)
    notes.append(q.reason())
    summary = configuration.summary(grid.metric)
    figure = cell(configuration, grid.metric).split(" · ")[0]
    times = relative(grid, column.task, column.label, row)
    try:
        times_value = float(times.split()[0]) if times else None
    except ValueError:  # below target, at chance
        times_value = None
    return Cell(
        "ok",
        summary,
        times,
        configuration.accuracy,
        "; ".join(n for n in notes if n),
        figure,
        times_value,
    )


def results_table(grid: Grid) -> ResultsTable:
    columns = []
    for task, labels in grid.columns.items():
        for label in labels:
            kinds = {c.first.kind for c in grid.configurations if c.task == task}
            kind = kinds.pop() if len(kinds) == 1 else "train"
            columns.append(Column(task, label, kind, grid.metric.unit(kind)))
    rows = [(row, [cell_of(grid, row, c) for c in columns]) for row in grid.rows]
    return ResultsTable(columns, rows, dict(grid.uniform))


@dataclass
class Host:
    hostname: str
    facts: list  # [(name, value)]: os, CPU, memory, GPUs, commits, speed variables
    frameworks: list  # [(framework, versions, python, settings)]


def _gib(n):
    return f"{n / 2**30:.1f} GiB" if n else ""


def hosts(runs) -> list:
    """Each host's environment as its runs recorded it (the latest run's host record)."""
    by_host = {}
    for run in runs:
        by_host.setdefault(run.hostname or "(unknown host)", []).append(run)
    found = []
    for name, members in sorted(by_host.items()):
        host = members[-1].result.get("host") or {}
        gpus = (
            "; ".join(
                f"{g.get('name')} (driver {g.get('driver')}, {g.get('memory')})"
                for g in host.get("gpus") or []
            )
            or "none"
        )
        commits = sorted(
            {(r.result.get("host") or {}).get("git_commit") or "not recorded" for r in members}
        )
        variables = host.get("environment_variables") or {}
        facts = [
            ("OS", host.get("os") or ""),
            ("CPU", host.get("cpu") or ""),
            ("CPUs (usable / all)", f"{host.get('cpu_affinity')} / {host.get('cpu_count')}"),
            ("memory", _gib(host.get("memory_bytes"))),
            ("GPUs", gpus),
            ("git commit", ", ".join(commits)),
            (
                "speed-relevant variables",
                " ".join(f"{k}={v}" for k, v in variables.items()) or "none",
            ),
        ]
        frameworks = {}
        for run in members:
            fw = run.result.get("framework") or {}
            versions = ", ".join(
                f"{k} {v}" for k, v in sorted((fw.get("versions") or {}).items()) if v is not None
            )
            python = run.result.get("python") or ""
            settings = ", ".join(
                f"{k}={v}"
                for k, v in sorted((fw.get("settings") or {}).items())
                if not isinstance(v, (dict, list))
            )
            if versions or python:
                frameworks[run.display_name] = (run.display_name, versions, python, settings)
        found.append(Host(name, facts, [frameworks[k] for k in sorted(frameworks)]))
    return found


@dataclass
class VerifyTable:
    """One verify.json: per framework and task the status and the largest deviations."""

    source: str
    frameworks: list
    tasks: list
    checks: dict = field(default_factory=dict)  # (framework, task) -> dict from verify.json


def verify_file(path: Path) -> Path:
    """A verify.json, or the verify output directory holding one."""
    path = Path(path)
    if path.is_dir():
        path = path / "verify.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: no such verify.json (python -m bench verify writes "
            f"results/verify/<time>/verify.json)"
        )
    return path


def verify_table(path) -> VerifyTable:
    path = verify_file(path)
    checks = json.loads(path.read_text())
    if not isinstance(checks, list) or not all(
        isinstance(c, dict) and {"framework", "task", "status"} <= set(c) for c in checks
    ):
        raise ValueError(f"{path} is not a `bench verify` result (a list of checks)")
    frameworks = list(dict.fromkeys(c["framework"] for c in checks))
    tasks = list(dict.fromkeys(c["task"] for c in checks))
    return VerifyTable(
        str(path), frameworks, tasks, {(c["framework"], c["task"]): c for c in checks}
    )
