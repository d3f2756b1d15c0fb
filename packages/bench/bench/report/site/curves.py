"""The page's learning curves as inline SVG: per task, test accuracy and test loss against the
training seconds, one line and band per configuration (bench.report.curves' data), the quality
target dashed. Every point carries its values in a <title> (the browser shows them on hover,
with no script); the legend's buttons show and hide a configuration in both charts (page.js).
Each configuration has its row's look (bench.report.looks: colour, marker, and a line style
per column), as in the PNG charts. No network, no library: the SVG is written here."""

import math
from html import escape

from .. import curves as curve_data
from .. import looks
from ..tables import title

WIDTH, HEIGHT = 560, 300
LEFT, RIGHT, TOP, BOTTOM = 58, 14, 14, 42


def marker(shape, x, y, r=4.0, title=""):
    """One point drawn as matplotlib draws the marker `shape` (bench.report.looks.MARKERS),
    class "point", with its values in a <title>."""
    inner = f"<title>{title}</title>" if title else ""
    if shape == "o":
        return f'<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}">{inner}</circle>'
    if shape == "s":
        return (
            f'<rect class="point" x="{x - r:.1f}" y="{y - r:.1f}" width="{2 * r:.1f}" '
            f'height="{2 * r:.1f}">{inner}</rect>'
        )
    shapes = {
        "^": [(0, -1.2), (1.1, 0.9), (-1.1, 0.9)],
        "v": [(0, 1.2), (1.1, -0.9), (-1.1, -0.9)],
        "D": [(0, -1.3), (1.0, 0), (0, 1.3), (-1.0, 0)],
        "P": [
            (-0.4, -1.1),
            (0.4, -1.1),
            (0.4, -0.4),
            (1.1, -0.4),
            (1.1, 0.4),
            (0.4, 0.4),
            (0.4, 1.1),
            (-0.4, 1.1),
            (-0.4, 0.4),
            (-1.1, 0.4),
            (-1.1, -0.4),
            (-0.4, -0.4),
        ],
        "X": [
            (-0.8, -1.1),
            (0, -0.3),
            (0.8, -1.1),
            (1.1, -0.8),
            (0.3, 0),
            (1.1, 0.8),
            (0.8, 1.1),
            (0, 0.3),
            (-0.8, 1.1),
            (-1.1, 0.8),
            (-0.3, 0),
            (-1.1, -0.8),
        ],
    }
    points = " ".join(f"{x + dx * r:.1f},{y + dy * r:.1f}" for dx, dy in shapes[shape])
    return f'<polygon class="point" points="{points}">{inner}</polygon>'


def nice_ticks(low, high, count=5):
    """Round tick values spanning [low, high] (about `count` of them)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return [0.0, 1.0]
    if high <= low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / max(count - 1, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.floor(low / step) * step
    ticks, value = [], first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    if ticks[-1] < high:
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


def _tick_text(value, metric):
    if metric == "accuracy":
        return f"{100 * value:g} %"
    return f"{value:g}"


def _value_text(value, metric):
    return f"{100 * value:.1f} %" if metric == "accuracy" else f"{value:.4f}"


def chart(task, found, metric):
    """One <svg> of the metric for the task's curves."""
    lines = {i: c.line(metric) for i, c in enumerate(found)}
    xs = [x for line in lines.values() for x, *_ in line]
    xs += [
        p.seconds_range[1]
        for c in found
        for p in c.points
        if metric in p.values and p.seconds_range[1] is not None
    ]
    ys = [v for line in lines.values() for _, y, lo, hi in line for v in (y, lo, hi)]
    targets = (
        sorted({c.target for c in found if c.target is not None}) if metric == "accuracy" else []
    )
    ys += targets
    if not xs:
        return ""
    x_ticks = nice_ticks(0.0, max(xs))
    y_ticks = nice_ticks(min(ys), max(ys))
    x0, x1, y0, y1 = x_ticks[0], x_ticks[-1], y_ticks[0], y_ticks[-1]
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(x):
        return LEFT + (x - x0) / ((x1 - x0) or 1) * plot_w

    def py(y):
        return TOP + plot_h - (y - y0) / ((y1 - y0) or 1) * plot_h

    label = curve_data.LABELS[metric]
    out = [
        f'<svg class="curve-chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(title(task))}: {label} against training seconds" '
        f'xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title(task))}: {label} against training seconds</title>",
        f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" class="plot"/>',
    ]
    for t in x_ticks:
        out.append(
            f'<line class="grid" x1="{px(t):.1f}" x2="{px(t):.1f}" y1="{TOP}" '
            f'y2="{TOP + plot_h}"/><text class="tick" x="{px(t):.1f}" '
            f'y="{TOP + plot_h + 14}" text-anchor="middle">{t:g}</text>'
        )
    for t in y_ticks:
        out.append(
            f'<line class="grid" x1="{LEFT}" x2="{LEFT + plot_w}" y1="{py(t):.1f}" '
            f'y2="{py(t):.1f}"/><text class="tick" x="{LEFT - 5}" y="{py(t) + 4:.1f}" '
            f'text-anchor="end">{escape(_tick_text(t, metric))}</text>'
        )
    out.append(
        f'<text class="axis" x="{LEFT + plot_w / 2:.1f}" y="{HEIGHT - 6}" '
        f'text-anchor="middle">training seconds</text>'
    )
    out.append(
        f'<text class="axis" transform="translate(12 {TOP + plot_h / 2:.1f}) '
        f'rotate(-90)" text-anchor="middle">{label}</text>'
    )
    for target in targets:
        out.append(
            f'<line class="target" x1="{LEFT}" x2="{LEFT + plot_w}" '
            f'y1="{py(target):.1f}" y2="{py(target):.1f}"><title>quality target '
            f"{100 * target:.0f} %</title></line>"
            f'<text class="tick" x="{LEFT + 4}" y="{py(target) - 4:.1f}">target '
            f"{100 * target:.0f} %</text>"
        )
    for i, line in lines.items():
        if line:
            out += _series(i, found[i], line, metric, label, px, py)
    out.append("</svg>")
    return "".join(out)


def _series(i, curve, line, metric, label, px, py):
    """The SVG of one curve: its band, its line and its points (`px`, `py`: data to SVG
    coordinates)."""
    out = []
    out.append(f'<g class="series" data-series="{i}" style="color: {curve.look.colour}">')
    if any(lo != hi for _, _, lo, hi in line):
        upper = " ".join(f"{px(x):.1f},{py(hi):.1f}" for x, _, _, hi in line)
        lower = " ".join(f"{px(x):.1f},{py(lo):.1f}" for x, _, lo, _ in reversed(line))
        out.append(f'<polygon class="band" points="{upper} {lower}"/>')
    points = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y, _, _ in line)
    dashes = looks.SVG_DASHES[curve.dash]
    dashed = f' stroke-dasharray="{dashes}"' if dashes else ""
    out.append(f'<polyline class="line" points="{points}"{dashed}/>')
    for point, (x, y, lo, hi) in zip([p for p in curve.points if metric in p.values], line):
        spread, seconds = "", ""
        if point.runs > 1:
            first, last = point.seconds_range
            spread = f" (runs {_value_text(lo, metric)} to {_value_text(hi, metric)})"
            seconds = f" (runs {first:.3g} to {last:.3g} s)"
            out.append(
                f'<line class="whisker" x1="{px(first):.1f}" x2="{px(last):.1f}" '
                f'y1="{py(y):.1f}" y2="{py(y):.1f}"/><line class="whisker" '
                f'x1="{px(x):.1f}" x2="{px(x):.1f}" y1="{py(lo):.1f}" '
                f'y2="{py(hi):.1f}"/>'
            )
        out.append(
            marker(
                curve.look.marker,
                px(x),
                py(y),
                title=f"{escape(curve.label)}: epoch {point.epoch}, {x:.3g} s{seconds}, "
                f"{label} {_value_text(y, metric)}{spread}, {point.runs} run"
                f"{'s' if point.runs > 1 else ''}",
            )
        )
    out.append("</g>")
    return out


def figure(task, found):
    """The task's two charts with one legend whose buttons toggle a configuration in both."""
    legend = "".join(
        f'<li><button type="button" data-series="{i}" aria-pressed="true" '
        f'style="color: {c.look.colour}"><svg class="swatch" viewBox="0 0 14 14" '
        f'aria-hidden="true">{marker(c.look.marker, 7, 7, 4.5)}</svg>'
        f"<span>{escape(c.label)}</span></button></li>"
        for i, c in enumerate(found)
    )
    charts = "".join(chart(task, found, metric) for metric in curve_data.METRICS)
    return (
        f'<figure class="curves" data-task="{escape(task)}"><ul class="legend">{legend}'
        f'</ul><div class="curve-charts">{charts}</div><figcaption>'
        f"{escape(title(task))}: test accuracy and test loss against training seconds "
        "(evaluations at each epoch's end, outside the timed window); line: the median "
        "over the runs, band: their lowest to highest. Hover a point for its values; a "
        "legend entry shows or hides its line.</figcaption></figure>"
    )


def section(found_by_task):
    """The page's curves section ("" without curves)."""
    if not found_by_task:
        return ""
    out = [
        '<section id="curves" aria-labelledby="curves-h">',
        '<h2 id="curves-h">Learning curves</h2>',
    ]
    out += [figure(task, found) for task, found in found_by_task.items()]
    out.append("</section>")
    return "\n".join(out)
