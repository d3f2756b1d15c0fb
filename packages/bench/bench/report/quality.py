"""The quality status of a configuration: did its runs reach their task's quality target, or is
their accuracy no better than chance? A speed without its quality is not a result, and a
configuration below its target or at chance is never ranked faster than another (its × and
its sentences say why instead).

Per run, the target is the one the run recorded (`stats.quality_target`: the task's declared
target for its data, conf/task/<task>.yaml) and whether an evaluation reached it
(`stats.target_reached`, from the learning curve). A configuration reached its target when
every one of its ok runs did. At chance: the median test accuracy lies within CHANCE_MARGIN of
a uniform guess (1 / classes; 0.5 for DenseNet-121's mean ROC-AUC). Inference tasks have no
quality status; results without a target (written before targets existed, or data with none
declared) are judged at chance or not, and otherwise "no target".
"""

import statistics
from dataclasses import dataclass
from typing import Optional

from bench_shared import spec

from .collection import Configuration, Result

CHANCE_MARGIN = 0.05  # accuracy (fraction) above a uniform guess still counted as chance

REACHED, BELOW_TARGET, AT_CHANCE, NO_TARGET, NOT_APPLICABLE = (
    "reached",
    "below_target",
    "at_chance",
    "no_target",
    "not_applicable",
)
RANKED = (REACHED, NO_TARGET, NOT_APPLICABLE)  # statuses a configuration may be ranked with


def chance(task) -> Optional[float]:
    """A uniform guess's accuracy (ROC-AUC for a multi-label task), or None (inference)."""
    s = spec.TASKS.get(task)
    if s is None or s.kind != "train":
        return None
    if getattr(s, "num_labels", None):
        return 0.5
    return 1.0 / s.num_classes


def target_of(run: Result) -> Optional[float]:
    """The quality target the run recorded, or None."""
    stats = run.result.get("stats") or {}
    target = stats.get("quality_target", run.result.get("quality_target"))
    return target if isinstance(target, (int, float)) else None


def reached(run: Result) -> Optional[bool]:
    """Whether an evaluation of the run reached its target (None: no target recorded)."""
    target = target_of(run)
    if target is None:
        return None
    stats = run.result.get("stats") or {}
    if isinstance(stats.get("target_reached"), bool):
        return stats["target_reached"]
    return isinstance(run.accuracy, (int, float)) and run.accuracy >= target


@dataclass(frozen=True)
class Quality:
    """A configuration's quality status (one of RANKED, BELOW_TARGET, AT_CHANCE)."""

    status: str
    accuracy: Optional[float] = None  # the ok runs' median test accuracy (ROC-AUC)
    target: Optional[float] = None
    chance: Optional[float] = None
    runs: int = 0  # ok runs judged
    below: int = 0  # of which did not reach the target

    @property
    def ranked(self) -> bool:
        """May it be called faster (or slower) than another configuration?"""
        return self.status in RANKED

    @property
    def short(self) -> str:
        """What the × column shows instead of a ratio: `below target`, `at chance`."""
        return self.status.replace("_", " ") if not self.ranked else ""

    def reason(self) -> str:
        """Why it is not ranked, in one line ("" when it is)."""
        if self.status == AT_CHANCE:
            return (
                f"its test accuracy {_percent(self.accuracy)} is at chance (a uniform "
                f"guess: {_percent(self.chance)})"
            )
        if self.status == BELOW_TARGET:
            which = f"{self.below} of {self.runs} runs" if self.runs > 1 else "its run"
            return (
                f"{which} did not reach the quality target {_percent(self.target)} "
                f"(test accuracy {_percent(self.accuracy)})"
            )
        return ""


def _percent(x):
    return "?" if x is None else f"{100 * x:.1f} %"


def of(configuration: Configuration) -> Quality:
    """The quality status of a configuration's ok runs."""
    ok = configuration.ok
    if configuration.first.kind != "train":
        return Quality(NOT_APPLICABLE, runs=len(ok))
    accuracies = [r.accuracy for r in ok if isinstance(r.accuracy, (int, float))]
    accuracy = statistics.median(accuracies) if accuracies else None
    level = chance(configuration.task)
    targets = [t for t in map(target_of, ok) if t is not None]
    target = max(targets) if targets else None
    judged = [reached(r) for r in ok]
    below = sum(1 for j in judged if j is False)
    if level is not None and accuracy is not None and accuracy < level + CHANCE_MARGIN:
        return Quality(AT_CHANCE, accuracy, target, level, len(ok), below)
    if below:
        return Quality(BELOW_TARGET, accuracy, target, level, len(ok), below)
    if target is None:
        return Quality(NO_TARGET, accuracy, None, level, len(ok))
    return Quality(REACHED, accuracy, target, level, len(ok))
