"""The home screen's status bar: the store, how many entries are shown and marked, the filter,
the sort and the theme, at three levels of brevity."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from memtui.stores.protocol import MemoryStore
from memtui.textsafe import one_line
from memtui.tui.widgets.table_model import COLUMNS, TableModel, sort_arrow


def status_text(
    model: TableModel,
    store: MemoryStore | None,
    path: str,
    brief: int,
    *,
    outside_change: bool,
    failed: bool,
    theme: str,
    where: str = "on disk",
    read_only: str | None = None,
) -> Text:
    """`brief` 0 says everything; 1 shortens the path to its name and drops the theme; 2 also
    drops the format and the sort."""
    text = Text()
    if outside_change:
        text.append(f" changed {where}: ctrl+r reloads ", style="bold reverse")
        text.append(" ")
    if read_only:
        text.append(" read-only ", style="bold reverse")
        text.append(" ")
    # a database URL stays whole (a Path would fold its `//`); a file shortens to its name
    short = path if "://" in path else Path(path).name
    shown_path = one_line(path if brief == 0 else short)
    if store is None:
        text.append(shown_path, style="dim")
        text.append(" · failed to open" if failed else " · opening…")
    else:
        text.append(shown_path, style="bold")
        if brief < 2:
            text.append(f" ({store.format_name})", style="dim")
        text.append(f" · {len(model.memories):,} entries · {len(model.view):,} shown")
        if model.marked:
            text.append(f" · {len(model.marked):,} marked", style="bold")
            hidden = model.marked_hidden()
            if hidden:
                text.append(f", {hidden:,} hidden by the filter", style="bold")
    if model.query:
        text.append(" · filter ")
        text.append(repr(model.query), style="bold")
    described = model.filters.describe()
    if described:
        text.append(f" · {one_line(described)}", style="bold")
    arrow = sort_arrow(model.sort_key, model.descending)
    sort_name = next((c.title or "status" for c in COLUMNS if c.key == model.sort_key), "")
    if brief < 2:
        text.append(f" · sort {sort_name}{arrow}", style="dim")
    if brief < 1:
        text.append(f" · theme {theme}", style="dim")
    return text
