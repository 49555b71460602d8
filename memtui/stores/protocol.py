"""`MemoryStore`: what every store (a file, a database table) answers; the service, curate and
the front ends talk to this, never to a concrete store class."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from memtui.model import Memory
from memtui.stores.file.backups import Backup
from memtui.stores.ledger import Transaction
from memtui.stores.progress import CommitProgress
from memtui.traits import FormatTraits

if TYPE_CHECKING:
    from memtui.stores.file.store import Change


class StorePath(Protocol):
    """A store's name as the user gave it: a file path, or a database URL that answers the
    few `Path` questions callers ask (plan files are suggested beside it)."""

    def resolve(self) -> Path: ...

    @property
    def stem(self) -> str: ...

    def with_name(self, name: str) -> Path: ...


class MemoryStore(Protocol):
    @property
    def path(self) -> StorePath: ...

    @property
    def format_name(self) -> str:
        """Its format's name, as messages and screens show it (what it holds: `traits`)."""
        ...

    @property
    def traits(self) -> FormatTraits: ...

    @property
    def fingerprint(self) -> str:
        """Changes whenever the store's content changes (file hash, table stamp)."""
        ...

    @property
    def place(self) -> str:
        """Where the store's content lives, as messages say it: "on disk", "in the database"."""
        ...

    @property
    def sidecar(self) -> Path | None:
        """The folder where memtui keeps its own files about the store (None: nowhere)."""
        ...

    # -- reading --------------------------------------------------------------------------

    def memories(self) -> list[Memory]: ...

    def __len__(self) -> int: ...

    def get(self, memory_id: str) -> Memory: ...

    def find(self, memory_id: str) -> Memory | None: ...

    def changed_on_disk(self) -> bool:
        """Whether another writer changed the store since memtui read or wrote it."""
        ...

    def reload(self) -> None: ...

    def problems(self) -> list[str]:
        """What is wrong with the store's ledger and side files, one line each."""
        ...

    # -- the ledger and backups -----------------------------------------------------------

    def transactions(self) -> list[Transaction]: ...

    def history(self) -> list[Transaction]: ...

    def transaction(self, tx_id: int) -> Transaction: ...

    def undone(self) -> dict[int, int]: ...

    def backups(self) -> list[Backup]: ...

    # -- changing -------------------------------------------------------------------------

    def new_id(self, now: datetime) -> str: ...

    def visible(self, memory: Memory | None) -> Memory | None:
        """What the store would hold for `memory` once written (None: it holds no entry)."""
        ...

    def returns_as(self, record: dict[str, Any], memory: Memory) -> bool:
        """Whether writing `record` (as the ledger kept it) back gives `memory` as the store
        would hold it: the entry can then come back byte for byte."""
        ...

    def commit(
        self,
        changes: Sequence[Change],
        *,
        actor: str,
        kind: str,
        reason: str,
        now: datetime,
        undoes: int | None = None,
        details: dict[str, Any] | None = None,
        progress: CommitProgress | None = None,
    ) -> Transaction:
        """`progress` is told the commit's stages with counts (see stores/progress.py)."""
        ...

    def undo(
        self,
        tx_id: int | None = None,
        *,
        now: datetime,
        actor: str = "user",
        reason: str = "",
        progress: CommitProgress | None = None,
    ) -> Transaction: ...

    def rollback(
        self,
        name: str,
        *,
        now: datetime,
        actor: str = "user",
        progress: CommitProgress | None = None,
    ) -> Transaction: ...
