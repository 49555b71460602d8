"""A small line chart drawn with braille dots (2×4 per cell), and a bar histogram.

Written for memtui rather than borrowed (plotext, textual-plotext): no extra dependency, output
that depends only on the data and the size (stable snapshots), colours from the theme, and
labels that are plain text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.console import Group
from rich.text import Text
from textual.widget import Widget

# braille dot bits for (column 0..1, row 0..3)
_DOTS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))


@dataclass(frozen=True, slots=True)
class Series:
    label: str
    points: Sequence[tuple[float, float]]
    style: str


@dataclass(slots=True)
class ChartData:
    series: list[Series] = field(default_factory=list)
    lines: list[tuple[float, str, str]] = field(default_factory=list)
    """Horizontal lines: (y, label, style)."""
    marks: list[tuple[float, str, str]] = field(default_factory=list)
    """Vertical marks: (x, label, style)."""
    x_max: float = 1.0
    y_max: float = 1.0
    x_unit: str = ""


def braille_lines(data: ChartData, width: int, height: int) -> list[Text]:
    """The plot area, `height` rows of `width` cells."""
    cols, rows = width * 2, height * 4
    bits = [[0] * width for _ in range(height)]
    owner: list[list[str | None]] = [[None] * width for _ in range(height)]

    def dot(px: int, py: int, style: str) -> None:
        if 0 <= px < cols and 0 <= py < rows:
            cy, cx = py // 4, px // 2
            bits[cy][cx] |= _DOTS[py % 4][px % 2]
            if owner[cy][cx] is None:
                owner[cy][cx] = style

    def to_px(x: float) -> int:
        return round(x / data.x_max * (cols - 1)) if data.x_max else 0

    def to_py(y: float) -> int:
        return rows - 1 - round(max(0.0, min(y, data.y_max)) / data.y_max * (rows - 1))

    for y, _, style in data.lines:
        for px in range(0, cols, 2):
            dot(px, to_py(y), style)
    for x, _, style in data.marks:
        for py in range(0, rows, 2):
            dot(to_px(x), py, style)
    for series in data.series:
        previous: tuple[int, int] | None = None
        for x, y in series.points:
            point = (to_px(x), to_py(y))
            if previous is not None:  # join the dots
                steps = max(abs(point[0] - previous[0]), abs(point[1] - previous[1]), 1)
                for n in range(steps + 1):
                    dot(
                        previous[0] + round((point[0] - previous[0]) * n / steps),
                        previous[1] + round((point[1] - previous[1]) * n / steps),
                        series.style,
                    )
            else:
                dot(*point, series.style)
            previous = point
    out = []
    for cy in range(height):
        line = Text()
        for cx in range(width):
            value = bits[cy][cx]
            line.append(chr(0x2800 + value) if value else " ", style=owner[cy][cx] or "")
        out.append(line)
    return out


def legend_lines(data: ChartData, width: int) -> list[Text]:
    """The legend's items, each kept whole, on as many lines as `width` needs."""
    items = [("━━ ", s.label, s.style) for s in data.series]
    items += [("┄┄ ", label, style) for _, label, style in data.lines]
    items += [("┆ ", label, style) for _, label, style in data.marks]
    lines = [Text()]
    for sign, label, style in items:
        item = Text(sign, style=style)
        item.append(label)
        line = lines[-1]
        gap = "   " if line.cell_len else ""
        if line.cell_len and line.cell_len + len(gap) + item.cell_len > width:
            lines.append(Text())
            line, gap = lines[-1], ""
        line.append(gap)
        line.append_text(item)
    return lines if lines[0].cell_len else []


def chart(data: ChartData, width: int, height: int) -> Group:
    """Plot, y axis labels, x axis labels and a legend (on as many lines as it takes)."""
    label_width = 5
    legend = legend_lines(data, width)
    plot_w, plot_h = max(10, width - label_width - 1), max(3, height - 2 - len(legend))
    plot = braille_lines(data, plot_w, plot_h)
    dot_rows = plot_h * 4

    def row_of(y: float) -> int:  # the text row holding the dot row of value y
        return (dot_rows - 1 - round(y / data.y_max * (dot_rows - 1))) // 4

    labels = {row_of(y): f"{y:4.2f}" for y in (0.0, data.y_max / 2, data.y_max)}
    rows = []
    for n, line in enumerate(plot):
        label = labels.get(n, "")
        row = Text(f"{label:>{label_width}}┤", style="dim")
        row.append_text(line)
        rows.append(row)
    axis = Text(" " * label_width + "└" + "─" * plot_w, style="dim")
    ticks = Text(" " * (label_width + 1), style="dim")
    marks = [0.0, data.x_max / 2, data.x_max]
    positions = [0, plot_w // 2, plot_w - 1]
    cursor = 0
    for x, pos in zip(marks, positions, strict=True):
        text = f"{x:g}{data.x_unit}"
        start = max(cursor, min(pos - len(text) // 2, plot_w - len(text)))
        ticks.append(" " * (start - cursor) + text)
        cursor = start + len(text)
    return Group(*rows, axis, ticks, *legend)


def histogram(bins: Sequence[tuple[str, int]], width: int, style: str = "") -> Group:
    """Horizontal bars, one per (label, count)."""
    if not bins:
        return Group(Text("nothing to show", style="dim"))
    label_width = max(len(label) for label, _ in bins)
    top = max(count for _, count in bins) or 1
    bar_width = max(5, width - label_width - 10)
    rows = []
    for label, count in bins:
        eighths = round(count / top * bar_width * 8)
        full, part = divmod(eighths, 8)
        bar = "█" * full + (" ▏▎▍▌▋▊▉"[part] if part else "")
        row = Text(f"{label:>{label_width}} ", style="dim")
        row.append(bar, style=style)
        row.append(f" {count}")
        rows.append(row)
    return Group(*rows)


class ChartView(Widget):
    """Shows a ChartData at whatever size the widget gets."""

    DEFAULT_CSS = "ChartView { height: 1fr; }"

    def __init__(self, data: ChartData | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.data = data or ChartData()

    def show(self, data: ChartData) -> None:
        self.data = data
        self.refresh()

    def render(self) -> Group:
        return chart(self.data, self.size.width, self.size.height)
