"""The page as one self-contained HTML file: the CSS, the script and the charts are inline, the
code is highlighted here (Pygments), so it opens from file:// with no network. Tables are
semantic (caption, scoped headers) and the results read the same without the script, which
only sorts columns and picks which two frameworks' code is shown."""

import base64
import io
import time
from html import escape
from pathlib import Path

from ..collection import uniform_text
from ..tables import title
from .content import NOT_RUN, ResultsTable
from .rosetta import TaskView, pygments_css

HERE = Path(__file__).resolve().parent

REFERENCE = "torch"  # shown first in the code view (the backbone's framework)


def _attrs(**attrs):
    return "".join(
        f' {k.rstrip("_").replace("_", "-")}="{escape(str(v))}"'
        for k, v in attrs.items()
        if v is not None and v is not False
    )


def _status_class(status):
    return "status-" + "".join(ch if ch.isalnum() else "-" for ch in status)


def results_section(
    table: ResultsTable, count, metric, legend="", anchor="results", heading="Results", warnings=()
):
    """The results table (or the time-to-target table: `anchor`, `heading`); `legend`: the
    report's legend of the same table (bench.report.tables.legend), `warnings` its lines."""
    shared = uniform_text(table.uniform)
    out = [
        f'<section id="{anchor}" aria-labelledby="{anchor}-h">',
        f'<h2 id="{anchor}-h">{escape(heading)}</h2>',
        f"<p>{count} result files. {escape(legend)} accuracy %: the test accuracy in "
        f"percent. <em>{NOT_RUN}</em>: no result. Click a column's heading to sort by it."
        + (f" All runs: {escape(shared)}." if shared else "")
        + "</p>",
        '<div class="scroll"><table class="results sortable">',
        f"<caption>{escape(metric.title.capitalize())}, relative speed and test accuracy per "
        "framework, task and hardware</caption>",
        "<thead>",
    ]
    tasks = []
    for column in table.columns:
        if not tasks or tasks[-1][0] != column.task:
            tasks.append((column.task, []))
        tasks[-1][1].append(column)
    # per column: the figure, ×, and for training tasks the test accuracy
    width = [3 if c.kind == "train" else 2 for c in table.columns]
    labelled = any(c.label for c in table.columns)  # what tells the columns apart, if any
    out.append(
        f'<tr><th scope="col" rowspan="{3 if labelled else 2}" data-sort-index="0">'
        "Framework</th>"
        + "".join(
            f'<th scope="colgroup" colspan="'
            f'{sum(width[table.columns.index(c)] for c in cols)}">'
            f"{escape(title(task))}</th>"
            for task, cols in tasks
        )
        + "</tr>"
    )
    if labelled:
        out.append(
            "<tr>"
            + "".join(
                f'<th scope="colgroup" colspan="{w}">{escape(c.label)}</th>'
                for c, w in zip(table.columns, width)
            )
            + "</tr>"
        )
    heads, index = [], 1
    for c, w in zip(table.columns, width):
        heads.append(f'<th scope="col" data-sort-index="{index}">{escape(c.unit)}</th>')
        heads.append(f'<th scope="col" data-sort-index="{index + 1}">×</th>')
        if w == 3:
            heads.append(f'<th scope="col" data-sort-index="{index + 2}">accuracy %</th>')
        index += w
    out.append("<tr>" + "".join(heads) + "</tr></thead><tbody>")
    for row, cells in table.rows:
        out.append(_results_row(row, cells, width))
    out.append("</tbody></table></div>")
    if warnings:
        out.append(
            '<ul class="warnings">' + "".join(f"<li>{escape(w)}</li>" for w in warnings) + "</ul>"
        )
    out.append("</section>")
    return "\n".join(out)


def _results_row(row, cells, width):
    """One framework's <tr>: per column its figure, × and (training) accuracy, or its status."""
    tds = [f'<th scope="row" data-sort="{escape(row)}">{escape(row)}</th>']
    for cell, w in zip(cells, width):
        if cell.status == "ok":
            note = _attrs(title=cell.note or None)
            tds.append(
                f'<td class="num"{note} data-sort="{cell.value!r}">{escape(cell.time_text)}</td>'
            )
            times = "" if cell.relative_value is None else repr(cell.relative_value)
            tds.append(f'<td class="num" data-sort="{times}">{escape(cell.relative)}</td>')
            if w == 3:
                tds.append(
                    f'<td class="num" data-sort="'
                    f'{"" if cell.accuracy is None else repr(cell.accuracy)}">'
                    f"{escape(cell.accuracy_text)}</td>"
                )
        else:
            cls = f"status {_status_class(cell.status)}"
            tds.append(
                f'<td class="{cls}" data-sort=""{_attrs(title=cell.note or None)}>'
                f'<span class="badge">{escape(cell.time_text)}</span></td>'
            )
            tds += [f'<td class="{cls}" data-sort=""></td>'] * (w - 1)
    return "<tr>" + "".join(tds) + "</tr>"


def table_section(anchor, heading, intro, header, rows, sentences=()):
    """A section of one plain table (and sentences before it): the comparisons, the baseline's
    verdicts, host against host, the 2018 figures per example."""
    out = [
        f'<section id="{anchor}" aria-labelledby="{anchor}-h">',
        f'<h2 id="{anchor}-h">{escape(heading)}</h2>',
        f"<p>{escape(intro)}</p>",
    ]
    if sentences:
        out.append("<ul>" + "".join(f"<li>{escape(s)}</li>" for s in sentences) + "</ul>")
    if rows:
        out.append(
            f'<div class="scroll"><table><caption>{escape(heading)}</caption><thead><tr>'
            + "".join(f'<th scope="col">{escape(h)}</th>' for h in header)
            + "</tr></thead><tbody>"
        )
        for row in rows:
            out.append(
                f'<tr><th scope="row">{escape(str(row[0]))}</th>'
                + "".join(f"<td>{escape(str(v))}</td>" for v in row[1:])
                + "</tr>"
            )
        out.append("</tbody></table></div>")
    out.append("</section>")
    return "\n".join(out)


def _svg(figure, salt):
    from matplotlib import rc_context

    buffer = io.BytesIO()
    # text as paths: the chart looks the same whatever fonts the reader's machine has
    with rc_context({"svg.fonttype": "path", "svg.hashsalt": salt}):
        figure.savefig(buffer, format="svg")
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def chart_images(grid):
    """[(task, data URI of an SVG chart)] from bench.report.charts' figures."""
    from ..charts import task_figure

    return [(task, _svg(task_figure(grid, task), task)) for task in grid.columns]


def history_images(found, metric, row_looks=None):
    """[(task, data URI)] of bench.report.history's charts."""
    from .. import history

    return [
        (task, _svg(figure, f"history-{task}"))
        for task, figure in history.figures(found, metric, row_looks).items()
    ]


def charts_section(
    images,
    anchor="charts",
    heading="Charts",
    what="the metric per framework "
    "(bars: median, error bars: spread of repeated runs, label: value and "
    "accuracy)",
):
    out = [
        f'<section id="{anchor}" aria-labelledby="{anchor}-h">'
        f'<h2 id="{anchor}-h">{escape(heading)}</h2>'
    ]
    for task, uri in images:
        out.append(
            f'<figure><img src="{uri}" alt="Chart of {escape(title(task))}: {escape(what)}'
            f'; the tables hold the same figures">'
            f"<figcaption>{escape(title(task))}: {escape(what)}</figcaption></figure>"
        )
    out.append("</section>")
    return "\n".join(out)


def hosts_section(hosts):
    out = [
        '<section id="environment" aria-labelledby="environment-h">',
        '<h2 id="environment-h">Environment</h2>',
    ]
    for host in hosts:
        out.append(f"<section><h3>{escape(host.hostname)}</h3><dl>")
        out += [f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in host.facts]
        out.append("</dl>")
        if host.frameworks:
            out.append(
                f'<div class="scroll"><table><caption>Frameworks as the workers on '
                f"{escape(host.hostname)} recorded them</caption><thead><tr>"
                '<th scope="col">framework</th><th scope="col">versions</th>'
                '<th scope="col">Python</th><th scope="col">settings as applied</th>'
                "</tr></thead><tbody>"
            )
            out += [
                f'<tr><th scope="row">{escape(n)}</th><td>{escape(v)}</td>'
                f"<td>{escape(p)}</td><td>{escape(s)}</td></tr>"
                for n, v, p, s in host.frameworks
            ]
            out.append("</tbody></table></div>")
        out.append("</section>")
    out.append("</section>")
    return "\n".join(out)


def _deviation(check):
    parts = []
    if check.get("output_error") is not None:
        parts.append(f"output {check['output_error']:.1e}")
    if check.get("train_error") is not None:
        parts.append(f"training {check['train_error']:.1e}")
    return " · ".join(parts)


def verify_section(tables):
    out = [
        '<section id="verify" aria-labelledby="verify-h"><h2 id="verify-h">Verify</h2>',
        "<p><code>python -m bench verify</code>: the largest deviation of each framework from "
        "the NumPy reference: outputs as max |error| / max |reference|, the training loss "
        "trajectory as its max relative difference.</p>",
    ]
    for table in tables:
        out.append(
            f'<div class="scroll"><table class="verify"><caption>{escape(table.source)}'
            '</caption><thead><tr><th scope="col">framework</th>'
            + "".join(f'<th scope="col">{escape(title(t))}</th>' for t in table.tasks)
            + "</tr></thead><tbody>"
        )
        for fw in table.frameworks:
            tds = []
            for task in table.tasks:
                check = table.checks.get((fw, task))
                if check is None:
                    tds.append(
                        f'<td class="status {_status_class(NOT_RUN)}">'
                        f'<span class="badge">{NOT_RUN}</span></td>'
                    )
                    continue
                status = check["status"]
                cls = "pass" if status == "pass" else f"status {_status_class(status)}"
                detail = check.get("detail") or ""
                short = detail if len(detail) <= 160 else detail[:157] + "..."
                tds.append(
                    f'<td class="{cls}"{_attrs(title=detail or None)}>'
                    f'<span class="badge">{escape(status)}</span> '
                    f"{escape(_deviation(check))}"
                    + (f"<br><small>{escape(short)}</small>" if short else "")
                    + "</td>"
                )
            out.append(f'<tr><th scope="row">{escape(fw)}</th>' + "".join(tds) + "</tr>")
        out.append("</tbody></table></div>")
    out.append("</section>")
    return "\n".join(out)


def _lines(lines):
    """The lines as block spans; a switch's reason once, under the last of the consecutive
    lines that apply it."""
    out = []
    for i, line in enumerate(lines):
        cls = "line switch" if line.switches else "line"
        out.append(f'<span class="{cls}">{line.html}</span>')
        following = lines[i + 1].switches if i + 1 < len(lines) else []
        out += [
            f'<span class="why">⚑ {escape(option)}: {escape(reason)}</span>'
            for option, reason in line.switches
            if (option, reason) not in following
        ]
    return "".join(out)


def _trimmed(lines):
    """Without the blank lines that end a block: the next block starts its own numbering."""
    end = len(lines)
    while end > 0 and not lines[end - 1].html.strip():
        end -= 1
    return lines[:end]


def _switch_tables(view: TaskView, reasons):
    out = ['<div class="switch-lists">']
    for fw in view.frameworks:
        values = dict(fw.options, **fw.task_options.get(view.task, {}))
        rows = []
        for option, value in values.items():
            where = (
                " (conf/task_framework/" + f"{view.task}_{fw.name}.yaml)"
                if option in fw.task_options.get(view.task, {})
                else ""
            )
            rows.append(
                f'<tr><th scope="row">{escape(option)}</th>'
                f"<td>{escape(repr(value))}{escape(where)}</td>"
                f"<td>{escape(reasons.get((fw.name, option), ''))}</td></tr>"
            )
        out.append(
            f'<div class="switches" data-fw="{escape(fw.name)}"><table><caption>'
            f"framework={escape(fw.name)}: options for {escape(title(view.task))}"
            '</caption><thead><tr><th scope="col">option</th><th scope="col">value</th>'
            '<th scope="col">why</th></tr></thead><tbody>'
            + "".join(rows)
            + "</tbody></table></div>"
        )
    out.append("</div>")
    return "\n".join(out)


def code_section(views, reasons):
    out = [
        '<section id="code" aria-labelledby="code-h"><h2 id="code-h">The models side by side'
        "</h2><p>Each framework's task module, then the modules of its own package that it "
        "imports and the package itself. Definitions with the same name (build_model, "
        "train_epoch, predict, weight slots, ...) sit on the same row. "
        '<span class="switch">Marked lines</span> apply a framework switch; its reason is '
        "below the line. Pick the two frameworks to compare.</p>"
    ]
    for view in views:
        if len(view.sources) == 0:
            continue
        # the project's reference framework (PyTorch) on the left where it is there
        reference = view.source_of.get(REFERENCE)
        shown = [s.id for s in sorted(view.sources, key=lambda s: s.id != reference)[:2]]
        first = {
            sid: next(fw for fw in view.frameworks if view.source_of[fw.name] == sid)
            for sid in shown
        }
        out.append(
            f'<section class="rosetta" id="code-{escape(view.task)}" '
            f'aria-labelledby="code-{escape(view.task)}-h">'
            f'<h3 id="code-{escape(view.task)}-h">{escape(view.task)}: '
            f"{escape(view.description)}</h3>"
            '<form class="pick">'
        )
        for side, sid in zip(("left", "right"), shown + shown[:1] * (2 - len(shown))):
            options = "".join(
                f'<option value="{escape(fw.name)}" data-source="{escape(view.source_of[fw.name])}"'
                f"{' selected' if fw is first[sid] else ''}>{escape(fw.display_name)} "
                f"({escape(fw.name)})</option>"
                for fw in view.frameworks
            )
            out.append(f'<label>{side} <select data-side="{side}">{options}</select></label>')
        out.append(
            '</form><p class="same-source" hidden>Both run the same package: the '
            "frameworks differ only in their options (below).</p>"
        )
        out.append(
            '<div class="scroll"><table class="rosetta-code"><caption>'
            f"{escape(title(view.task))}: the code of the two frameworks picked above"
            "</caption><thead><tr>"
        )
        for source in view.sources:
            names = ", ".join(
                fw.display_name for fw in view.frameworks if view.source_of[fw.name] == source.id
            )
            head = escape(source.files[0][0]) if source.files else escape(source.missing)
            out.append(
                f'<th scope="col" data-src="{source.id}"'
                f"{'' if source.id in shown else ' hidden'}>{escape(names)}<br>"
                f"<code>{head}</code></th>"
            )
        out.append("</tr></thead><tbody>")
        for index, key in enumerate(view.rows):
            tds = []
            for source in view.sources:
                hidden = "" if source.id in shown else " hidden"
                piece = source.cells.get(index)
                if piece is None or (not _trimmed(piece[1]) and piece[0] is None):
                    tds.append(f'<td data-src="{source.id}"{hidden}></td>')
                    continue
                label, lines = piece[0], _trimmed(piece[1])
                head = f'<div class="file">{escape(label)}</div>' if label else ""
                first = lines[0].number - 1 if lines else 0  # CSS counts the line numbers
                tds.append(
                    f'<td data-src="{source.id}"{hidden}>{head}<pre class="code" '
                    f'style="counter-reset: ln {first}">{_lines(lines)}</pre></td>'
                )
            out.append(f'<tr data-key="{escape(key)}">' + "".join(tds) + "</tr>")
        out.append("</tbody></table></div>")
        out.append(_switch_tables(view, reasons))
        out.append("</section>")
    out.append("</section>")
    return "\n".join(out)


def page(sections, nav, subtitle):
    css = (HERE / "page.css").read_text() + "\n" + pygments_css(".code")
    script = (HERE / "page.js").read_text()
    links = "".join(f'<li><a href="#{anchor}">{escape(name)}</a></li>' for anchor, name in nav)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        "<title>Rosetta Bench</title>\n<style>\n" + css + "\n</style>\n</head>\n<body>\n"
        f"<header><h1>Rosetta Bench</h1><p>{escape(subtitle)}</p>"
        f'<nav aria-label="sections"><ul>{links}</ul></nav></header>\n<main>\n'
        + "\n".join(sections)
        + "\n</main>\n"
        f"<footer><p>Written {time.strftime('%Y-%m-%d %H:%M %Z')} by python -m bench report "
        "--html.</p></footer>\n<script>\n" + script + "\n</script>\n</body>\n</html>\n"
    )
