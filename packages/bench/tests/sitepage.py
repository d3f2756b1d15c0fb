"""Fixture results for the HTML page's tests, and a reader of the page's tables (the standard
library's HTML parser: what a reader without JavaScript gets)."""

import dataclasses
import json
from html.parser import HTMLParser
from pathlib import Path

from result_files import make_result

from bench.tools import verify

# every fixture run shares the hardware and precision: named once, not in the column labels
SHARED = "Intel Xeon Gold 6148, 8 CPUs, fp32"

# (framework, task, seconds, accuracy, status): known figures and every kind of cell
RESULTS = [
    ("torch", "cnn", 50.0, 0.780, "ok"),
    ("torch", "cnn", 54.0, 0.770, "ok"),  # repeats: median 51, half the range 2
    ("torch", "cnn", 51.0, 0.776, "ok"),
    ("torch", "rnn", 16.0, 0.855, "ok"),
    ("torch", "resnet50", 1.9, None, "ok"),
    ("tensorflow", "cnn", 57.0, 0.771, "ok"),
    ("tensorflow", "rnn", None, None, "failed"),
    ("tensorflow", "resnet50", None, None, "invalid"),  # a status the page names as it is
    ("gluon", "cnn", 43.0, 0.700, "ok"),
    ("gluon", "rnn", None, None, "unsupported"),
    # gluon resnet50: not run
]


def write_results(directory: Path, specs=RESULTS):
    for i, spec in enumerate(specs):
        run_dir = directory / f"job{i}"
        run_dir.mkdir(parents=True)
        result = make_result(*spec, device="cpu", gpu=None, seed=i)
        (run_dir / "result.json").write_text(json.dumps(result))
    return directory


def write_verify(directory: Path):
    """A verify.json as `bench verify` writes it (its own Check records)."""
    directory.mkdir(parents=True, exist_ok=True)
    checks = [
        verify.Check(
            "torch", "cnn", "pass", output_error=3.5e-07, train_error=2.9e-05, param_count=1250858
        ),
        verify.Check(
            "torch",
            "rnn",
            "FAIL",
            output_error=2.0e-03,
            train_error=4.1e-02,
            param_count=2769866,
            detail="loss trajectory differs",
        ),
        verify.Check("tensorflow", "cnn", "not_installed", detail="no environment"),
    ]
    (directory / "verify.json").write_text(json.dumps([dataclasses.asdict(c) for c in checks]))
    return directory


class Tables(HTMLParser):
    """Every <table>: its caption and its rows, each a list of (tag, text, attributes)."""

    def __init__(self, html):
        super().__init__()
        self.tables, self._cell, self._caption = [], None, None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append({"caption": "", "rows": [], "attrs": dict(attrs)})
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])
        elif tag in ("td", "th") and self.tables:
            self._cell = [tag, "", dict(attrs)]
        elif tag == "caption":
            self._caption = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1]["rows"][-1].append(tuple(self._cell))
            self._cell = None
        elif tag == "caption":
            self.tables[-1]["caption"] = self._caption
            self._caption = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[1] += data
        elif self._caption is not None:
            self._caption += data

    def find(self, caption_part):
        return next(t for t in self.tables if caption_part in t["caption"])


def body(table):
    """A parsed table's body rows: those that start with a row heading."""
    return [r for r in table["rows"] if r and r[0][2].get("scope") == "row"]
