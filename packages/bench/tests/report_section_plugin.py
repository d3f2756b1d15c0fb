"""A report section from outside bench (tests/test_report_sections.py installs it through the
entry-point group `rosetta_bench.report_sections`): how many runs each framework row holds."""

from bench.report.sections import Section


class RunsPerFramework(Section):
    key, heading = "runs_per_framework", "Runs per framework"

    def find(self, context):
        counts = {}
        for c in context.grid.configurations:
            counts[c.row] = counts.get(c.row, 0) + len(c.runs)
        return counts or None

    def markdown(self, found, context):
        return "Runs per framework: " + ", ".join(f"{k} {v}" for k, v in sorted(found.items()))

    def data(self, found, context):
        return dict(sorted(found.items()))

    def table(self, found, context):
        return (
            "How many runs each row holds.",
            ["framework", "runs"],
            [[k, str(v)] for k, v in sorted(found.items())],
            [],
        )
