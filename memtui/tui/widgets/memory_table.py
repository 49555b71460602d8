"""The memory table: a virtual list that renders only the rows on screen (Textual's Line API),
so 100k entries open and scroll as fast as 100. Row text is memory data: it goes into
segments as plain text, never through markup."""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from memtui.model import HIDDEN_STATUSES, Memory
from memtui.tui.bindings import bindings_for
from memtui.tui.failures import GuardedHandlers
from memtui.tui.widgets.table_model import COLUMNS, Column, TableModel, layout, sort_arrow

_BAR = " ▏▎▍▌▋▊▉█"


def importance_bar(value: float, width: int = 5) -> str:
    eighths = round(max(0.0, min(1.0, value)) * width * 8)
    full, part = divmod(eighths, 8)
    return ("█" * full + (_BAR[part] if part else "")).ljust(width)


class MemoryTable(GuardedHandlers, ScrollView, can_focus=True):
    HELP_TITLE = "Memory table"
    BINDINGS: ClassVar[list[BindingType]] = bindings_for("MemoryTable")

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "memory-table--header",
        "memory-table--sorted",
        "memory-table--cursor",
        "memory-table--marked",
        "memory-table--retired",
        "memory-table--bar",
        "memory-table--muted",
    }

    DEFAULT_CSS = """
    MemoryTable { height: 1fr; overflow-x: hidden; scrollbar-size-vertical: 1; }
    MemoryTable > .memory-table--header { text-style: bold; background: $panel; }
    MemoryTable > .memory-table--sorted {
        text-style: bold underline; background: $panel; color: $accent;
    }
    MemoryTable > .memory-table--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground;
    }
    MemoryTable:blur > .memory-table--cursor { background: $block-cursor-blurred-background; }
    MemoryTable > .memory-table--marked { background: $secondary 30%; text-style: bold; }
    MemoryTable > .memory-table--retired { color: $text-muted; text-style: italic; }
    MemoryTable > .memory-table--bar { color: $primary; }
    MemoryTable > .memory-table--muted { color: $text-muted; }
    """

    cursor: reactive[int] = reactive(0, always_update=True, init=False)

    class Highlighted(Message):
        def __init__(self, memory: Memory | None) -> None:
            super().__init__()
            self.memory = memory

    class ViewChanged(Message):
        """Rows, sort, marks or filter changed: the status bar recounts."""

    def __init__(self, model: TableModel, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model = model
        self._strips: LRUCache[tuple[object, ...], Strip] = LRUCache(160)
        self._layout_width = -1
        self._columns: list[tuple[Column, int]] = []

    # -- data ---------------------------------------------------------------------------------

    def refresh_view(self, keep_id: str | None = None) -> None:
        """The model's view changed: resize, keep the cursor on `keep_id` if it is shown."""
        self._strips.clear()
        self.virtual_size = Size(self.scrollable_content_region.width, len(self.model.view) + 1)
        row = self.model.position_of(keep_id) if keep_id else None
        self.cursor = min(row if row is not None else self.cursor, max(0, len(self.model.view) - 1))
        self.refresh()
        # once the new size is laid out (a scroll before that stops at the old end)
        self.call_after_refresh(self._scroll_to_cursor)
        self.post_message(self.ViewChanged())

    @property
    def current(self) -> Memory | None:
        return self.model.memory_at(self.cursor)

    def watch_cursor(self, row: int) -> None:
        self._scroll_to_cursor()
        self.refresh()
        self.post_message(self.Highlighted(self.current))

    def _scroll_to_cursor(self) -> None:
        visible = max(1, self.size.height - 1)
        top = round(self.scroll_y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + visible:
            self.scroll_to(y=self.cursor - visible + 1, animate=False, immediate=True)

    # -- actions ------------------------------------------------------------------------------

    def action_cursor(self, delta: int) -> None:
        self.cursor = max(0, min(len(self.model.view) - 1, self.cursor + delta))

    def action_page(self, direction: int) -> None:
        page = max(1, self.size.height - 2)
        self.action_cursor(direction * page)

    def action_jump(self, row: int) -> None:
        self.cursor = max(0, len(self.model.view) - 1) if row < 0 else 0

    def action_mark(self) -> None:
        memory = self.current
        if memory is None:
            return
        self.model.toggle_mark(memory.id)
        self._strips.clear()
        self.refresh()
        self.post_message(self.ViewChanged())
        self.action_cursor(1)

    def sort_by(self, key: str, descending: bool | None = None) -> None:
        """A new order starts at its first row."""
        self.model.set_sort(key, descending)
        self.refresh_view()
        self.cursor = 0
        self.scroll_to(y=0, animate=False, immediate=True)

    def action_sort_next(self) -> None:
        keys = [c.key for c, _ in self._columns] or [c.key for c in COLUMNS]
        at = keys.index(self.model.sort_key) if self.model.sort_key in keys else -1
        self.sort_by(keys[(at + 1) % len(keys)])

    def action_sort_reverse(self) -> None:
        self.sort_by(self.model.sort_key, not self.model.descending)

    def on_click(self, event: events.Click) -> None:
        if event.y == 0:
            x = 0
            for column, width in self._columns:
                if x <= event.x < x + width + 1:
                    self.sort_by(column.key)
                    return
                x += width + 1
            return
        row = round(self.scroll_y) + event.y - 1
        if 0 <= row < len(self.model.view):
            self.cursor = row

    def on_resize(self, event: events.Resize) -> None:
        self._strips.clear()
        self.virtual_size = Size(self.scrollable_content_region.width, len(self.model.view) + 1)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()

    # -- rendering ----------------------------------------------------------------------------

    def _current_layout(self, width: int) -> list[tuple[Column, int]]:
        if width != self._layout_width:
            self._layout_width = width
            self._columns = layout(width)
        return self._columns

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        columns = self._current_layout(width)
        if y == 0:
            return self._header(columns, width)
        row = round(self.scroll_y) + y - 1
        if not self.model.view and y == 2 and self.model.memories:
            return Strip([Segment(_fit(self.empty_hint(), width), self.rich_style)])
        if row >= len(self.model.view):
            return Strip.blank(width, self.rich_style)
        index = self.model.view[row]
        memory = self.model.memories[index]
        marked = memory.id in self.model.marked
        key = (index, width, row == self.cursor, marked, self.has_focus)
        strip = self._strips.get(key)
        if strip is None:
            strip = self._row(index, memory, columns, width, row == self.cursor, marked)
            self._strips[key] = strip
        return strip

    def empty_hint(self) -> str:
        """Why the table shows no row, and how to see rows again."""
        why = []
        if self.model.query:
            why.append(f"the filter {self.model.query!r}")
        described = self.model.filters.describe()
        if described:
            why.append(described)
        if not why:
            return "  No entry is shown: . shows merged, superseded and deleted entries."
        return (
            f"  No entry matches {' and '.join(why)}. escape clears the filter; f changes the "
            "quick filters (Clear shows everything)."
        )

    def _header(self, columns: list[tuple[Column, int]], width: int) -> Strip:
        header = self.get_component_rich_style("memory-table--header")
        sorted_style = self.get_component_rich_style("memory-table--sorted")
        arrow = sort_arrow(self.model.sort_key, self.model.descending)
        segments = []
        for n, (column, cell) in enumerate(columns):
            title = column.title + (arrow if column.key == self.model.sort_key else "")
            if column.key == "status" and column.key == self.model.sort_key:
                title = arrow
            text = _fit(title, cell, column.align_right)
            style = sorted_style if column.key == self.model.sort_key else header
            segments.append(Segment(text, style))
            if n < len(columns) - 1:
                segments.append(Segment(" ", header))
        return Strip(segments).extend_cell_length(width, header).crop(0, width)

    def _row(
        self,
        index: int,
        memory: Memory,
        columns: list[tuple[Column, int]],
        width: int,
        is_cursor: bool,
        marked: bool,
    ) -> Strip:
        base = self.rich_style
        if memory.status in HIDDEN_STATUSES:
            base = base + self.get_component_rich_style("memory-table--retired")
        if marked:
            base = base + self.get_component_rich_style("memory-table--marked")
        if is_cursor:
            base = base + self.get_component_rich_style("memory-table--cursor")
        bar = base + Style(color=self.get_component_rich_style("memory-table--bar").color)
        muted = base + Style(color=self.get_component_rich_style("memory-table--muted").color)
        cells = self.model.cells(index)
        segments = []
        for n, (column, cell) in enumerate(columns):
            text = cells[COLUMNS.index(column)]
            if column.key == "importance":
                segments.append(Segment(importance_bar(memory.importance), bar))
                segments.append(Segment(" " + _fit(text, cell - 6, True), base))
            elif column.key == "status":  # a mark, then the status symbol: not colour alone
                segments.append(Segment(("*" if marked else " ") + text, base))
            else:
                style = muted if column.key in ("age", "used", "accesses", "id") else base
                segments.append(Segment(_fit(text, cell, column.align_right), style))
            if n < len(columns) - 1:
                segments.append(Segment(" ", base))
        return Strip(segments).extend_cell_length(width, base).crop(0, width)


def _fit(text: str, width: int, right: bool = False) -> str:
    if width <= 0:
        return ""
    if cell_len(text) > width:
        return set_cell_size(text, width - 1) + "…"
    return set_cell_size(text, width) if not right else " " * (width - cell_len(text)) + text
