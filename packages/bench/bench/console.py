"""What the orchestrator shows on a terminal: progress of a worker, drawn from its events
(tqdm bars on a terminal wide enough for one, plain lines in logs and on a terminal of no
width, where a bar would show nothing); plain-text tables; and the one guard of every
sub-command's command line, with the types of its numbers."""

import argparse
import functools
import math
import os
import re
import sys
import time

from tqdm import tqdm

LOG_INTERVAL_S = 15.0  # one line per phase at most this often when output is not a terminal
MIN_COLUMNS = 20  # narrower than this, a terminal gets the plain lines


# what a terminal acts on rather than shows: C0 and C1 controls (escape sequences, carriage
# returns, backspaces), DEL, and the bidirectional overrides that reorder what is shown
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def escape(text: str) -> str:
    """text with every control character written out (`\\x1b`, `\\n`, `\\u202e`), as a JSON
    string would hold it: a string read from a result file can neither move the cursor, erase
    a line nor reorder what a terminal shows."""
    return CONTROL.sub(lambda m: ascii(m.group())[1:-1], text)


def escaped(value):
    """Every string in a JSON-like value (keys too) escaped (`escape`)."""
    if isinstance(value, str):
        return escape(value)
    if isinstance(value, dict):
        return {escaped(k): escaped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [escaped(v) for v in value]
    return value


def text_table(header, rows):
    """Columns padded to their widest cell, a dashed rule under the header."""
    rows = [[str(v) for v in row] for row in [header, *rows]]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def fraction(text):
    """argparse type: a finite number, 0 or more (a share: 0.05 = 5 %)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text}: a finite fraction, 0 or more (0.05 = 5 %)")
    return value


def count(text):
    """argparse type: a whole number, 1 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: 1 or more")
    return value


def subcommand(main):
    """A sub-command's main(argv) -> exit status, with argparse's exit (--help: 0; a bad
    command line: 2, argparse printing which) returned as the status rather than raised
    through the command line."""

    @functools.wraps(main)
    def guarded(argv):
        try:
            return main(argv)
        except SystemExit as exc:
            return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)

    return guarded


def bars_fit(stream):
    """Whether `stream` is a terminal with room for a progress bar (its own width: a terminal
    that reports none is no room)."""
    try:
        return stream.isatty() and os.get_terminal_size(stream.fileno()).columns >= MIN_COLUMNS
    except (AttributeError, ValueError, OSError):
        return False


class ProgressView:
    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.tty = bars_fit(self.stream)
        self.bar = None
        self.phase = None

    def _label(self, event):
        if event.get("epoch"):
            return f"{event['phase']} epoch {event['epoch']}/{event['epochs']}"
        return event["phase"]

    def handle(self, event):
        kind = event["event"]
        if kind == "phase":
            self.close()
            self.phase = dict(
                event,
                label=self._label(event),
                start=time.monotonic(),
                next_log=time.monotonic() + LOG_INTERVAL_S,
            )
            if self.tty:
                self.bar = tqdm(
                    total=event["total"],
                    desc=self.phase["label"],
                    unit=event.get("unit", "it"),
                    file=self.stream,
                    leave=False,
                    dynamic_ncols=True,
                    unit_scale=event.get("unit_scale", False),
                )
        elif kind == "step" and self.phase is not None:
            if self.bar is not None:
                self.bar.update(event["done"] - self.bar.n)
            elif time.monotonic() >= self.phase["next_log"]:
                self.phase["next_log"] = time.monotonic() + LOG_INTERVAL_S
                self._line(
                    tqdm.format_meter(
                        event["done"],
                        self.phase["total"],
                        time.monotonic() - self.phase["start"],
                        prefix=self.phase["label"],
                        unit=self.phase.get("unit", "it"),
                        unit_scale=self.phase.get("unit_scale", False),
                    )
                )
        elif kind == "phase_end" and self.phase is not None:
            details = [f"{event['seconds']:.2f} s"] if "seconds" in event else []
            details += [f"loss {event['loss']:.4f}"] if "loss" in event else []
            details += [f"accuracy {event['accuracy']:.4f}"] if "accuracy" in event else []
            label = self.phase["label"]
            self.close()
            self._line(f"{label}: {', '.join(details)}")

    def _line(self, text):
        if self.bar is not None:
            self.bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()
        self.bar = None
        self.phase = None
