"""The baseline: the same rows in Textual's stock DataTable (it measures every cell of every
row before the first paint).

    python bench/stock_table_app.py STORE
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual.app import App, ComposeResult
from textual.widgets import DataTable

from memtui.stores import open_store
from memtui.textsafe import one_line


class StockTable(App[None]):
    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path

    def compose(self) -> ComposeResult:
        yield DataTable()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("status", "importance", "content", "category", "source", "user", "id")
        table.add_rows(
            (
                m.status.value,
                f"{m.importance:.2f}",
                one_line(m.content)[:60],
                m.category,
                m.source.value,
                m.user_id or "-",
                m.id,
            )
            for m in open_store(self.path).memories()
        )


if __name__ == "__main__":
    StockTable(sys.argv[1]).run()
