"""What a report section is (Section), what it reads besides the runs (Options) and what
sections share (Context); the list of sections: bench.report.sections."""

from dataclasses import dataclass, field
from functools import cached_property


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
    def to_target_comparisons(self):
        """tables.comparisons of the time-to-target grid ([] without one)."""
        from .. import tables

        return tables.comparisons(self.to_target) if self.to_target is not None else []

    @cached_property
    def reference(self):
        """The 2018 figures, with --reference; None otherwise."""
        from .. import reference_2018

        return reference_2018.load() if self.options.reference else None
