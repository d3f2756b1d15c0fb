"""Tables written into the documentation: a block of a markdown file between a marker line
that records the report command's arguments and an end line, replaced by the table those
arguments give (docs/reports.md, "Tables in this documentation").

The file is rewritten whole (a temporary file renamed over it) with its permissions kept. A
read-only file (no write permission for anyone, or none for this user) is refused, never
replaced: making it read-only says that it is not to be rewritten.
"""

import os
import re
import shlex
import stat
from pathlib import Path

from .. import files
from . import agreement, axes, reference_2018

MARKER = re.compile(r"^<!-- bench report: (.*) -->$")
END_MARKER = "<!-- end bench report -->"


def blocks(path: Path, wanted):
    """(the file's lines, the indices of the marker lines that record `wanted`, the report's
    arguments); ValueError when the file cannot be read or has no such marker."""
    try:
        lines = path.read_text().splitlines(keepends=True)
    except OSError as exc:
        raise ValueError(f"--into {path}: cannot read it ({exc.strerror or exc})") from None
    starts = [
        i
        for i in _unfenced(lines)
        if (m := MARKER.match(lines[i].rstrip("\n"))) and shlex.split(m.group(1)) == wanted
    ]
    if not starts:
        raise ValueError(
            f"--into {path}: no line `<!-- bench report: {shlex.join(wanted)} -->` "
            f"in it; put that line and `{END_MARKER}` where the table goes"
        )
    return lines, starts


def check_writable(path: Path):
    """ValueError (one line) when `path` may not be rewritten: a read-only file (no write bit:
    0444), one on a read-only file system, or one this user may not write."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # blocks() says why it cannot be read
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise ValueError(
            f"--into {path}: the file is read-only (mode "
            f"{stat.S_IMODE(mode):04o}); it is left as it is: make it writable "
            f"(chmod u+w {shlex.quote(str(path))}) to regenerate its table"
        )
    try:
        read_only_fs = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        read_only_fs = False
    if read_only_fs:
        raise ValueError(f"--into {path}: cannot write it: it is on a read-only file system")
    if not os.access(path, os.W_OK):
        raise ValueError(
            f"--into {path}: cannot write it: this user may not (mode {stat.S_IMODE(mode):04o})"
        )


def replace(path: Path, lines, starts, table):
    """Write path with each block that starts at `starts` holding `table`, keeping the file's
    permissions; ValueError (one line) when it cannot be written."""
    for start in reversed(starts):
        end = next(
            (i for i in range(start + 1, len(lines)) if lines[i].rstrip("\n") == END_MARKER), None
        )
        if end is None:
            raise ValueError(
                f"--into {path}: line {start + 1} opens a bench report block that "
                f"no `{END_MARKER}` line closes"
            )
        lines[start + 1 : end] = ["\n", table, "\n"]
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        files.write_bytes(path, "".join(lines).encode(), mode=mode)
    except OSError as exc:
        raise ValueError(f"--into {path}: cannot write it ({exc.strerror or exc})") from None


def _unfenced(lines):
    """The indices of the lines outside fenced code blocks (a marker shown in a ``` block is an
    example of one, not a block)."""
    fenced = False
    for i, line in enumerate(lines):
        if line.startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced:
            yield i


def marker_arguments(argv):
    """argv less `--into FILE` / `--into=FILE`: the arguments a marker line records."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--into":
            skip = True
        elif not arg.startswith("--into="):
            out.append(arg)
    return out


def write(args, argv, grid, main_table):
    """Replace, in args.into, the block whose marker records this command's arguments (argv
    less --into FILE) with the legend and the main table of `grid` (`main_table(grid,
    reference)`), or --table's; the file's path."""
    path = Path(args.into)
    check_writable(path)
    lines, starts = blocks(path, marker_arguments(argv))
    if args.table == "agreement":
        table = agreement.markdown(agreement.groups(grid), heading=False, shared=grid.uniform)
        if not table:
            raise ValueError(
                f"--table agreement: no training configuration in "
                f"{' '.join(args.paths)} has two seeds or more in a group of "
                f"two frameworks or more"
            )
    elif args.table == "settings":
        table = axes.markdown(axes.pairs(grid), grid.metric)
        if not table:
            raise ValueError(
                f"--table settings: no configuration in {' '.join(args.paths)} differs from "
                f"its framework's declared baseline in one setting (e.g. precision=bf16 "
                f"beside precision=fp32)"
            )
    else:
        table = main_table(grid, reference_2018.load() if args.reference else None)
    replace(path, lines, starts, table)
    return path
