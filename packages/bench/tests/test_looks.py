"""One look per framework row (bench.report.looks): the 18 rows of the README's table all look
different in a chart, and the page draws each marker matplotlib draws."""

import re

from bench.report import looks
from bench.report.site.curves import marker


def test_every_row_of_a_large_table_has_a_look_of_its_own():
    rows = [f"row {i}" for i in range(70)]
    found = looks.by_row(rows)
    assert len(set(found.values())) == len(rows)
    # the tenth colour comes round again with another marker
    assert found["row 0"].colour == found["row 10"].colour
    assert found["row 0"].marker != found["row 10"].marker


def test_the_page_draws_every_marker_with_its_values_on_hover():
    for shape in looks.MARKERS:
        svg = marker(shape, 10, 10, title="PyTorch: epoch 1")
        assert re.fullmatch(
            r'<(circle|rect|polygon) class="point" [^>]*><title>PyTorch: epoch 1</title></\1>',
            svg,
        ), svg
