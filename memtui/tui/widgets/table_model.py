"""What the memory table shows: the filtered, sorted view of a store's entries, marks, and
the cell texts of each row. Plain Python (no textual): fast enough to refilter 100k entries
per keystroke, because sort orders and search text are computed once and reused."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memtui.model import HIDDEN_STATUSES, STATUS_SYMBOL, Memory, Status
from memtui.textsafe import one_line
from memtui.views import age_text

_STATUS_ORDER = {s: n for n, s in enumerate(Status)}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    title: str
    width: int  # 0: takes the remaining width
    drop_order: int  # narrow screens drop the highest first; 0 never
    align_right: bool = False
    elapsed: bool = False  # shows the time since a moment: sorting newest first, it ascends


def sort_arrow(key: str, descending: bool) -> str:
    """The arrow that says how the column's shown values run (↓: the largest first)."""
    elapsed = next((c.elapsed for c in COLUMNS if c.key == key), False)
    return "↓" if descending != elapsed else "↑"


COLUMNS: tuple[Column, ...] = (
    Column("status", "", 2, 0),
    Column("importance", "importance", 11, 0),  # the title and the sort arrow fit
    Column("content", "content", 0, 0),
    Column("category", "category", 11, 5),
    Column("source", "source", 7, 6),
    Column("user", "user", 10, 3),
    Column("age", "age", 5, 4, True, elapsed=True),
    Column("used", "used", 5, 7, True, elapsed=True),
    Column("accesses", "uses", 5, 8, True),
    Column("id", "id", 22, 9),
)
COLUMN_KEYS = tuple(c.key for c in COLUMNS)
MIN_CONTENT = 30


def layout(width: int) -> list[tuple[Column, int]]:
    """Columns that fit in `width` cells, with their widths (one space between columns)."""
    columns = list(COLUMNS)
    while True:
        fixed = sum(c.width for c in columns if c.width) + len(columns) - 1
        rest = width - fixed
        if rest >= MIN_CONTENT or not any(c.drop_order for c in columns):
            break
        columns.remove(max(columns, key=lambda c: c.drop_order))
    return [(c, c.width or max(1, rest)) for c in columns]


# each column's sort values of a list of entries (one comprehension: 100k entries at open)
_SORT_VALUES: dict[str, Callable[[Sequence[Memory]], list[Any]]] = {
    "status": lambda ms: [_STATUS_ORDER[m.status] for m in ms],
    "importance": lambda ms: [m.importance for m in ms],
    "content": lambda ms: [m.content.lower() for m in ms],
    "category": lambda ms: [m.category.lower() for m in ms],
    "source": lambda ms: [m.source.value for m in ms],
    "user": lambda ms: [(m.user_id or "").lower() for m in ms],
    "age": lambda ms: [m.created_at or _EPOCH for m in ms],
    "used": lambda ms: [m.last_accessed_at or _EPOCH for m in ms],
    "accesses": lambda ms: [m.access_count for m in ms],
    "id": lambda ms: [m.id for m in ms],
}


@dataclass(frozen=True, slots=True)
class QuickFilters:
    statuses: frozenset[Status] | None = None
    """None: every status but the hidden ones (merged, superseded, deleted)."""
    user: str | None = None
    category: str | None = None
    source: str | None = None
    show_hidden: bool = False

    def describe(self) -> str:
        parts = []
        if self.statuses is not None:
            parts.append("status " + ",".join(sorted(s.value for s in self.statuses)))
        for name in ("user", "category", "source"):
            value = getattr(self, name)
            if value is not None:
                parts.append(f"{name} {value}")
        if self.show_hidden and self.statuses is None:
            parts.append("+hidden")
        return " · ".join(parts)


_NO_FILTERS = QuickFilters()


def build_haystack(memories: Sequence[Memory]) -> list[str]:
    return [f"{m.content}\n{m.id}\n{m.category}\n{chr(10).join(m.tags)}".lower() for m in memories]


class TableModel:
    def __init__(self, memories: Sequence[Memory], now: datetime) -> None:
        self.now = now
        self.sort_key = "age"
        self.descending = True
        self.query = ""
        self.filters = QuickFilters()
        self.marked: set[str] = set()
        self.load(memories)

    def load(self, memories: Sequence[Memory]) -> None:
        """New entries (a reload): keeps sort, filters and the marks that still exist."""
        self.memories = memories if isinstance(memories, list) else list(memories)
        self._index: dict[str, int] | None = None  # built when first asked (not for the paint)
        if self.marked:
            self.marked &= set(self.index)
        # row indices live in arrays, not lists: the garbage collector never walks them, so its
        # full collections stay short however big the store is
        self._orders: dict[str, array[int]] = {}
        self._haystack: list[str] | None = None
        self._cells: dict[int, tuple[str, ...]] = {}
        self._base: array[int] | None = None
        self.view: array[int] = array("l")
        self.refilter()

    @property
    def index(self) -> dict[str, int]:
        """Each entry's place in `memories`, by id."""
        if self._index is None:
            self._index = {m.id: n for n, m in enumerate(self.memories)}
        return self._index

    # -- the view -----------------------------------------------------------------------------

    def _order(self, key: str) -> array[int]:
        order = self._orders.get(key)
        if order is None:
            values = _SORT_VALUES[key](self.memories)
            order = array("l", sorted(range(len(values)), key=values.__getitem__))
            self._orders[key] = order
        return order

    def _passes(self) -> Callable[[Memory], bool]:
        f = self.filters
        statuses = f.statuses
        hidden = HIDDEN_STATUSES if statuses is None and not f.show_hidden else frozenset()

        def passes(m: Memory) -> bool:
            if statuses is not None and m.status not in statuses:
                return False
            if m.status in hidden:
                return False
            return (
                (f.user is None or m.user_id == f.user)
                and (f.category is None or m.category == f.category)
                and (f.source is None or m.source.value == f.source)
            )

        return passes

    def refilter(self) -> None:
        order = self._order(self.sort_key)
        if self.descending:
            order = order[::-1]
        memories = self.memories
        if self.filters == _NO_FILTERS:  # as the table opens: the hidden statuses left out
            hidden = HIDDEN_STATUSES
            self._base = array("l", [i for i in order if memories[i].status not in hidden])
        else:
            passes = self._passes()
            self._base = array("l", [i for i in order if passes(memories[i])])
        self._apply_query(self._base)

    def _apply_query(self, candidates: array[int]) -> None:
        needle = self.query.lower()
        if not needle:
            self.view = array("l", candidates)
            return
        hay = self.haystack
        self.view = array("l", [i for i in candidates if needle in hay[i]])

    @property
    def haystack(self) -> list[str]:
        """What `/` searches: content, tags, id and category, lowercased, once."""
        if self._haystack is None:
            self._haystack = build_haystack(self.memories)
        return self._haystack

    def offer_haystack(self, memories: list[Memory], haystack: list[str]) -> None:
        """A haystack built in the background, for these very memories."""
        if memories is self.memories and self._haystack is None:
            self._haystack = haystack

    def set_query(self, query: str) -> None:
        previous = self.query.lower()
        self.query = query
        if previous and query.lower().startswith(previous):
            self._apply_query(self.view)  # typing narrows: search what is shown
        else:
            self._apply_query(self._base if self._base is not None else array("l"))

    def set_sort(self, key: str, descending: bool | None = None) -> None:
        if key not in COLUMN_KEYS:
            raise ValueError(key)
        if descending is None:
            descending = (
                not self.descending
                if key == self.sort_key
                else key
                in (
                    "importance",
                    "age",
                    "used",
                    "accesses",
                )
            )
        self.sort_key, self.descending = key, descending
        self.refilter()

    def set_filters(self, filters: QuickFilters) -> None:
        self.filters = filters
        self.refilter()

    def position_of(self, memory_id: str) -> int | None:
        index = self.index.get(memory_id)
        if index is None:
            return None
        try:
            return self.view.index(index)
        except ValueError:
            return None

    # -- rows ---------------------------------------------------------------------------------

    def memory_at(self, row: int) -> Memory | None:
        if 0 <= row < len(self.view):
            return self.memories[self.view[row]]
        return None

    def marked_hidden(self) -> int:
        """How many marked entries the current filter hides."""
        if not self.marked:
            return 0
        wanted = {self.index[i] for i in self.marked if i in self.index}
        return len(wanted) - sum(1 for row in self.view if row in wanted)

    def toggle_mark(self, memory_id: str) -> None:
        if memory_id in self.marked:
            self.marked.discard(memory_id)
        else:
            self.marked.add(memory_id)

    def cells(self, index: int) -> tuple[str, ...]:
        """The row's texts in column order; memory text made safe for a terminal line."""
        cached = self._cells.get(index)
        if cached is None:
            m = self.memories[index]
            cached = (
                STATUS_SYMBOL[m.status],
                f"{m.importance:4.2f}",
                one_line(m.content),
                one_line(m.category),
                m.source.value,
                one_line(m.user_id or "-"),
                age_text(m.created_at, self.now),
                age_text(m.last_accessed_at, self.now),
                str(m.access_count),
                one_line(m.id),
            )
            if len(self._cells) > 4096:
                self._cells.clear()
            self._cells[index] = cached
        return cached

    def choices(self, field: str) -> list[str]:
        """Distinct values of a field, for the quick filters."""
        if field == "user":
            values = {m.user_id for m in self.memories if m.user_id is not None}
        elif field == "category":
            values = {m.category for m in self.memories}
        else:
            values = {m.source.value for m in self.memories}
        return sorted(values)
