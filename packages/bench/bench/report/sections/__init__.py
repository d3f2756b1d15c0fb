"""The report's comparisons, each one object. A section finds what it compares in the runs
(`find`) and gives that finding as Markdown (report.md), as data (report.json, under its `key`)
and as HTML (the page, with its `key` as the anchor); a section with files of its own (a CSV,
charts) writes them too. report.md, report.json and the page loop over `every()`: a new
comparison is one class, and it reaches all three outputs with no edit to them.

The built-in sections are in bench.report.sections.builtin, in the order the outputs show
them. Another package adds one through the entry-point group `bench.report_sections`
(`name = "module:object"`, the object a Section or a class of one): it comes after the
built-in ones, and one that cannot be loaded is said on stderr and left out."""

import sys
from dataclasses import dataclass, field
from functools import cached_property

ENTRY_POINTS = "bench.report_sections"


class Section:
    """One comparison of the report. Subclasses set `key` and `heading` and implement `find`,
    `markdown` and `data`; `table` (or `html`) gives the page its part."""

    key = ""  # report.json's key and the page's anchor: lowercase, `_` or `-` between words
    heading = ""  # the page's heading and its entry in the page's navigation

    def find(self, context: "Context"):
        """What the section shows, from context.grid (and context.options); None where it has
        nothing to show (it is left out of every output)."""
        raise NotImplementedError

    def markdown(self, found, context) -> str:
        """Its part of report.md ("": none)."""
        raise NotImplementedError

    def data(self, found, context):
        """Its value in report.json (plain JSON: dicts, lists, strings, numbers, None)."""
        raise NotImplementedError

    def table(self, found, context):
        """(intro, header, rows, sentences) for the page: one plain table with sentences
        before it; None: no part of the page. `html` renders it."""
        return None

    def html(self, found, context) -> str:
        """Its part of the page ("": none); by default the plain table of `table`."""
        shown = self.table(found, context)
        if shown is None:
            return ""
        from ..site import render  # the page's module: only when a page is written

        intro, header, rows, sentences = shown
        return render.table_section(self.anchor, self.heading, intro, header, rows, sentences)

    def write(self, found, context, directory) -> None:
        """Files of its own in the report's directory (a CSV, charts); none by default."""

    @property
    def anchor(self) -> str:
        return self.key.replace("_", "-")


@dataclass
class Options:
    """What sections read besides the runs: the report command's settings."""

    min_change: float = 0.05  # --min-change: the smallest change called one
    min_runs: int = 2  # --min-runs
    accuracy_drop: float = 0.02  # --accuracy-drop
    baseline: list = field(default_factory=list)  # --baseline's paths
    every_status: bool = False  # --status all: the baseline's runs of every status too
    history: bool = False  # --history
    reference: bool = False  # --reference: the 2018 figures
    charts: bool = True  # not --no-charts

    @classmethod
    def of(cls, args):
        return cls(
            min_change=args.min_change,
            min_runs=args.min_runs,
            accuracy_drop=args.accuracy_drop,
            baseline=list(args.baseline or ()),
            every_status=args.status == "all",
            history=bool(args.history),
            reference=bool(args.reference),
            charts=not args.no_charts,
        )


class Context:
    """The grid of the runs shown, the options, and what more than one section derives from
    them (computed once)."""

    def __init__(self, grid, options: Options = None):
        self.grid = grid
        self.options = options or Options()

    @property
    def metric(self):
        return self.grid.metric

    @cached_property
    def to_target(self):
        """The time-to-target table's grid, or None where no run has a quality target."""
        from .. import tables

        return tables.time_to_target_grid(self.grid)

    @cached_property
    def reference(self):
        """The 2018 figures, with --reference; None otherwise."""
        from .. import reference_2018

        return reference_2018.load() if self.options.reference else None


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
