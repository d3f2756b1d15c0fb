"""Reading the markdown tables the report writes, for assertions on their cells."""

import re


def _cells(line):
    return [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]


def parse_table(text, first_header="framework"):
    """The first markdown table whose first header cell is `first_header`, as
    {first cell of each row: {header: cell}}."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    header = _cells(lines[start])
    table = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = _cells(line)
        table[cells[0]] = dict(zip(header[1:], cells[1:]))
    return table
