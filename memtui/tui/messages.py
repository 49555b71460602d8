"""Typed messages the workers post to the app (workers never touch widgets)."""

from __future__ import annotations

from threading import Event
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:  # types only: the app's first paint loads neither the planner nor numpy
    from memtui.engine.plan import Plan
    from memtui.model import Memory
    from memtui.service import History, Lineage
    from memtui.stores.file.backups import Backup
    from memtui.stores.ledger import Transaction
    from memtui.stores.protocol import MemoryStore


class StoreReady(Message):
    """The store is read; `painted` is set once its table is on the screen (the worker waits
    for it before the work the first paint does not need)."""

    def __init__(
        self, store: MemoryStore, memories: list[Memory], reloaded: bool, painted: Event
    ) -> None:
        super().__init__()
        self.store = store
        self.memories = memories
        self.reloaded = reloaded
        self.painted = painted


class HaystackReady(Message):
    """The search text of each memory, built off the UI thread."""

    def __init__(self, memories: list[Memory], haystack: list[str]) -> None:
        super().__init__()
        self.memories = memories
        self.haystack = haystack


class StoreFailed(Message):
    def __init__(self, path: str, problem: str) -> None:
        super().__init__()
        self.path = path
        self.problem = problem


class HistoryReady(Message):
    def __init__(self, history: History) -> None:
        super().__init__()
        self.history = history


class OutsideChange(Message):
    """Another program rewrote the store file since memtui read it."""


class LineageReady(Message):
    def __init__(self, chain: Lineage) -> None:
        super().__init__()
        self.chain = chain


class Committed(Message):
    def __init__(self, transaction: Transaction, note: str, close: bool) -> None:
        super().__init__()
        self.transaction = transaction
        self.note = note
        self.close = close


class CommitFailed(Message):
    def __init__(self, problem: str) -> None:
        super().__init__()
        self.problem = problem


class CommitStage(Message):
    """Where a running commit is (the store layer reports no finer progress)."""

    def __init__(self, stage: str) -> None:
        super().__init__()
        self.stage = stage


class LedgerRead(Message):
    """The ledger's transactions (newest first), which are undone, and the backups."""

    def __init__(
        self, transactions: list[Transaction], undone: dict[int, int], backups: list[Backup]
    ) -> None:
        super().__init__()
        self.transactions = transactions
        self.undone = undone
        self.backups = backups


class PlanFileDone(Message):
    """A plan file was read or written in a worker: `problem` says why not, else `plan`."""

    def __init__(
        self,
        path: str,
        plan: Plan | None,
        problem: str | None,
        *,
        saved: bool,
        approved: set[str] | None = None,
    ) -> None:
        super().__init__()
        self.approved = approved  # the decisions a saved file holds
        self.path = path
        self.plan = plan
        self.problem = problem
        self.saved = saved
