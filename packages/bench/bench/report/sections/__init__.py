"""The report's comparisons, each one object. A section finds what it compares in the runs
(`find`) and gives that finding as Markdown (report.md), as data (report.json, under its `key`)
and as HTML (the page, with its `key` as the anchor); a section with files of its own (a CSV,
charts) writes them too. report.md, report.json and the page loop over `every()`: a new
comparison is one class, and it reaches all three outputs with no edit to them.

The built-in sections are in bench.report.sections.builtin, in the order the outputs show
them. Another package adds one through the entry-point group `rosetta_bench.report_sections`
(`name = "module:object"`, the object a Section or a class of one): it comes after the
built-in ones, and one that cannot be loaded is said on stderr and left out."""

import sys
from dataclasses import dataclass

from .base import Context, Options, Section

__all__ = ["Context", "Options", "Part", "Section", "every", "find_all", "register"]

ENTRY_POINTS = "rosetta_bench.report_sections"


_registered = []


def register(section: Section) -> Section:
    """Add a section after the others (for this process); returns it."""
    _registered.append(section)
    return section


def _plugins():
    from importlib.metadata import entry_points

    points = entry_points()
    points = (
        points.select(group=ENTRY_POINTS)
        if hasattr(points, "select")
        else points.get(ENTRY_POINTS, ())  # Python 3.9
    )
    found = []
    for point in sorted(points, key=lambda p: p.name):
        try:
            loaded = point.load()
            section = loaded() if isinstance(loaded, type) else loaded
            if not isinstance(section, Section) or not section.key:
                raise TypeError("not a bench.report.sections.Section with a key")
        except Exception as exc:  # a broken plugin costs its own section only
            print(
                f"report: section {point.name} ({point.value}) left out: "
                f"{type(exc).__name__}: {exc}",
                file=sys.stderr,
            )
            continue
        found.append(section)
    return found


def every():
    """The sections in the order the outputs show them: the built-in ones, then the entry
    points', then those registered in this process. Two with one key: the first is kept."""
    from .builtin import BUILT_IN

    kept, keys = [], set()
    for section in [*BUILT_IN, *_plugins(), *_registered]:
        if section.key in keys:
            print(f"report: section {section.key!r} given twice; the first kept", file=sys.stderr)
            continue
        keys.add(section.key)
        kept.append(section)
    return kept


@dataclass
class Part:
    """A section and what it found."""

    section: Section
    found: object


def find_all(context: Context):
    """[Part] of every section with something to show."""
    parts = []
    for section in every():
        found = section.find(context)
        if found is not None:
            parts.append(Part(section, found))
    return parts
