"""Measured rounds: each candidate's outcome over the rounds of a stage, the rule that calls
one clearly faster than another, and the working file that keeps every finished round."""

import dataclasses
import statistics
from pathlib import Path

from ... import files
from ...report import verdict
from ...report.metrics import METRICS
from ...run import sweep
from .candidates import TuneError


@dataclasses.dataclass
class CandidateRounds:
    """One candidate's rounds in one stage."""

    settings: dict
    precision: str
    rounds: list  # measurement dicts

    @property
    def ok(self):
        return bool(self.rounds) and all(
            m["status"] == "ok" and m["throughput"] for m in self.rounds
        )

    @property
    def throughput(self):
        values = [m["throughput"] for m in self.rounds if m["status"] == "ok" and m["throughput"]]
        return statistics.median(values) if values else None

    @property
    def spread(self):
        values = [m["throughput"] for m in self.rounds if m["status"] == "ok" and m["throughput"]]
        return (min(values), max(values)) if values else None

    @property
    def accuracy(self):
        values = [
            m["accuracy"]
            for m in self.rounds
            if m["status"] == "ok" and m.get("accuracy") is not None
        ]
        return statistics.median(values) if values else None

    @property
    def error(self):
        bad = [m for m in self.rounds if m["status"] != "ok"]
        return f"{bad[0]['status']}: {bad[0].get('error', '')}" if bad else ""


def clearly_faster(challenger, incumbent, min_gain):
    """Whether the challenger's rounds beat the incumbent's beyond the noise, by the one rule
    reports use too (bench.report.verdict): its median by min_gain, and its slowest round
    above the incumbent's fastest. A single round each is judged on the medians alone."""
    values = [
        [m["throughput"] for m in o.rounds if m["status"] == "ok" and m["throughput"]]
        for o in (challenger, incumbent)
    ]
    return (
        verdict.judge(METRICS["steady"], *values, min_change=min_gain, min_runs=1).kind
        == verdict.FASTER
    )


class Work:
    """The working file: every finished round, saved after each, found again when the same
    tune runs again, which keeps the rounds that ran ok (or unsupported) and runs the others
    again (`retried`: how many), as a sweep does."""

    # what a kept measurement holds, and of which types (run_one writes them)
    FIELDS = {
        "stage": (str,),
        "key": (str,),
        "round": (int,),
        "status": (str,),
        "throughput": (int, float, type(None)),
        "accuracy": (int, float, type(None)),
        "result": (str,),
        "finished": (str,),
    }

    def __init__(self, path: Path, fingerprint, restart):
        self.path = path
        self.fingerprint = fingerprint
        try:
            old = None if restart else files.read_json(path, "--restart discards it")
        except ValueError as exc:  # not JSON, or not text
            raise TuneError(str(exc)) from None
        problem = None if old is None else self._problem(old)
        if problem:
            raise TuneError(
                f"{path} is not a tune's working file ({problem}); --restart discards it"
            )
        if old is not None and old.get("fingerprint") != fingerprint:
            changed = sweep.first_difference(old.get("fingerprint") or {}, fingerprint)
            raise TuneError(
                f"{path} holds the rounds of a different tune ({changed}); --restart discards them"
            )
        kept = (old or {}).get("measurements", [])
        self.measurements = [m for m in kept if m["status"] in sweep.DONE]
        self.retried = len(kept) - len(self.measurements)
        self.index = {self._key(m): m for m in self.measurements}

    @classmethod
    def _problem(cls, old):
        """What makes a working file's content unusable, or None."""
        if not isinstance(old, dict) or not isinstance(old.get("measurements", []), list):
            return "not an object with a list of measurements"
        for i, m in enumerate(old.get("measurements", [])):
            if not isinstance(m, dict):
                return f"measurement {i + 1} is not an object"
            for name, types in cls.FIELDS.items():
                value = m.get(name)
                if not isinstance(value, types) or isinstance(value, bool):
                    return f"measurement {i + 1} has {name} {value!r}"
        return None

    @staticmethod
    def _key(m):
        return (m["stage"], m["key"], m["round"])

    def get(self, stage, key, rnd):
        return self.index.get((stage, key, rnd))

    def add(self, m):
        self.measurements.append(m)
        self.index[self._key(m)] = m
        files.write_json(
            self.path, {"fingerprint": self.fingerprint, "measurements": self.measurements}
        )
