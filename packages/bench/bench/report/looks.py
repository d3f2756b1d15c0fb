"""One look per framework row, the same in every chart of a report and on the page: a colour
and a marker. Ten colours alone repeat past the tenth row (17 rows drew Chainer and MXNet
Module alike); with seven markers beside them (seven and ten share no factor) the first
seventy rows all look different. Where a row has several lines in one chart (one per column),
the line style tells them apart."""

from dataclasses import dataclass

# matplotlib's tab10, so that the PNG charts and the page's SVG agree
COLOURS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
MARKERS = ("o", "s", "^", "D", "v", "P", "X")  # matplotlib's names; the page draws the same
DASHES = ("solid", "dashed", "dotted", "dashdot")
SVG_DASHES = {"solid": "", "dashed": "6 4", "dotted": "2 3", "dashdot": "6 3 2 3"}


@dataclass(frozen=True)
class Look:
    colour: str
    marker: str


def look(index: int) -> Look:
    return Look(COLOURS[index % len(COLOURS)], MARKERS[index % len(MARKERS)])


def by_row(rows) -> dict:
    """{row: Look} by each row's place in `rows` (a grid's rows: every chart of one report
    takes them from the same grid, so a row looks the same in all)."""
    return {row: look(i) for i, row in enumerate(rows)}


def dash(index: int) -> str:
    """The line style of a row's index-th line in one chart."""
    return DASHES[index % len(DASHES)]
