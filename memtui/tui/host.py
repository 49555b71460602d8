"""What the screens may ask of the app: a typed interface instead of untyped `self.app.X()`.

`MemtuiApp` implements it (mypy checks that in app.py); screens reach it with `host(self)`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol, cast

from rich.text import Text
from textual.command import Provider
from textual.dom import DOMNode
from textual.screen import Screen

from memtui.model import Memory
from memtui.service import History, Service
from memtui.stores.file.backups import Backup
from memtui.stores.ledger import Transaction
from memtui.stores.protocol import MemoryStore
from memtui.tui.bindings import PaletteCommand


class MemtuiHost(Protocol):
    service: Service
    store: MemoryStore | None  # None until the store opened (or when it failed to)
    history: History | None  # every image the ledger holds, read after each commit
    outside_change: bool  # another program changed the store since memtui read it
    load_problem: str | None  # why the store could not be opened
    read_only: str | None  # why memtui can change nothing in the store (shown as a badge)

    def now(self) -> datetime: ...

    def confirm_commit(
        self,
        title: str,
        body: Text,
        job: Callable[[MemoryStore], Transaction],
        note: Callable[[Transaction], str],
        *,
        close: bool = False,
        working: str = "saving the change",
    ) -> None: ...

    def confirm_change(
        self,
        title: str,
        body: Text,
        job: Callable[[MemoryStore, str | None], Transaction],
        note: Callable[[Transaction], str],
        *,
        close: bool = False,
        working: str = "saving the change",
    ) -> None: ...

    def commit_progress(self, stage: str, done: int, total: int) -> None:
        """Where a running commit is; safe to call from the commit's worker thread (pass it
        as the `progress` of a Service call in a `confirm_commit` job)."""
        ...

    def request_undo(self, tx: Transaction) -> None: ...

    def request_rollback(self, backup: Backup) -> None: ...

    def request_restore(self, memory: Memory) -> None: ...

    def open_merge(self, members: list[Memory], hidden: int = 0) -> None: ...

    def leave_screen(self, screen: Screen[Any]) -> None: ...

    def home_ready(self) -> None: ...

    def update_status(self) -> None: ...

    def palette_commands(self) -> list[PaletteCommand]: ...

    def report_error(self, error: BaseException) -> None: ...


def host(owner: DOMNode | Provider) -> MemtuiHost:
    """The memtui app a widget, screen or palette provider runs in."""
    return cast("MemtuiHost", owner.app)
