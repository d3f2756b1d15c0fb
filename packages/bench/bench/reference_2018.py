"""DeepLearningFrameworks' 2018 results (SPEC.md's last table) as data: reference_2018.csv,
package data.

Shown beside our own numbers, never mixed with them: other GPUs (K80, P100), CUDA 8, cuDNN 6.
"""
import csv
from pathlib import Path

from .tables import markdown_table, title

DATA = Path(__file__).resolve().parent / "reference_2018.csv"


class Reference:
    def __init__(self, rows, hardware):
        self.hardware = hardware
        self.frameworks = list(dict.fromkeys(r["framework"] for r in rows))  # as published
        self.texts = {(r["framework"], r["task"], r["gpu"]): r["seconds"] for r in rows}
        self._by_name = {fw.casefold(): fw for fw in self.frameworks}

    def tasks(self):
        return list(dict.fromkeys(task for _, task, _ in self.texts))

    def gpus(self, task):
        return list(dict.fromkeys(gpu for _, t, gpu in self.texts if t == task))

    def text(self, framework, task, gpu):
        """The published figure as printed (e.g. '7.7'), '' when none; `framework` is matched
        by name, case-insensitively (our display names are DeepLearningFrameworks': 'PyTorch')."""
        name = self._by_name.get(str(framework).casefold())
        return self.texts.get((name, task, gpu), "")

    def seconds(self, framework, task, gpu):
        text = self.text(framework, task, gpu)
        return float(text) if text else None

    def markdown(self):
        columns = [(task, gpu) for task in self.tasks() for gpu in self.gpus(task)]
        header = ["framework"] + [f"{title(task)} {gpu}" for task, gpu in columns]
        rows = [[fw] + [self.text(fw, task, gpu) for task, gpu in columns]
                for fw in self.frameworks]
        return (f"2018 reference (DeepLearningFrameworks' published figures; {self.hardware}; "
                f"not measured here):\n\n{markdown_table(header, rows)}\n")


def load(path: Path = DATA) -> Reference:
    lines = Path(path).read_text().splitlines()
    hardware = next((line.split(":", 1)[1].strip() for line in lines
                     if line.startswith("# hardware:")), "hardware unknown")
    rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    for row in rows:
        float(row["seconds"])  # a figure that is not a number is an error in the data file
    return Reference(rows, hardware)
