"""The lists and trees of every screen, with one set of movement keys: `j`/`k` and the arrows,
`home`/`end`, `pgup`/`pgdn` (the memory table has the same, memory_table.py)."""

from __future__ import annotations

from typing import ClassVar, Literal

from textual.binding import Binding, BindingType
from textual.widgets import OptionList, Tree


class MemtuiList(OptionList):
    """An OptionList with `j`/`k`; its page keys wait until it has a size (Textual's raise a
    KeyError on a list filled by a worker but not laid out yet, when a key comes in between)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
    ]

    def _move_page(self, direction: Literal[-1, 1]) -> None:
        if self.scrollable_content_region:
            super()._move_page(direction)


class MemtuiTree(Tree[str]):
    """A Tree whose cursor moves with `j`/`k`, the arrows, `home`/`end` and the page keys."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("home", "scroll_home", "First", show=False),
        Binding("end", "scroll_end", "Last", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
    ]
