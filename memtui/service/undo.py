"""Taking changes back: undo, rollback to a backup or a table copy, the backups themselves, and
compacting a native store's journal."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Protocol, runtime_checkable

from memtui.errors import ConflictError, MemtuiError
from memtui.model import Memory
from memtui.service.base import History, Part, file_store, record_of
from memtui.stores import Actor, Backup, Change, Transaction
from memtui.stores.file.compaction import Compaction, compact_store
from memtui.stores.ledger import ChangeImage, undo_target
from memtui.stores.progress import CommitProgress
from memtui.stores.protocol import MemoryStore


@runtime_checkable
class TableCopies(Protocol):
    """A store that copies its whole table to a file and rolls back to such a copy (the
    PostgreSQL store; a file store keeps whole-file backups instead)."""

    def dump(self, dest: Path) -> int: ...

    def rollback_from_copy(
        self, source: Path, *, now: datetime, actor: str, progress: CommitProgress | None
    ) -> Transaction: ...


class Ledger(Part):
    """What the ledger holds of each entry; undo, rollback, backups and compaction."""

    def of(self, store: MemoryStore) -> History:
        """Every image the ledger holds of each entry."""
        return History.of(store)

    def record(
        self, store: MemoryStore, memory_id: str, history: History | None = None
    ) -> Memory | None:
        """The entry as the store holds it, or as the ledger last saw it."""
        return record_of(store, memory_id, history)

    def undo(
        self, store: MemoryStore, tx_id: int | None = None, progress: CommitProgress | None = None
    ) -> Transaction:
        """Revert a transaction (default: the newest not undone) as a new one; `progress` is
        told its stages (checking, preparing, backup, ledger, writing) with counts. Refused,
        naming them, when later transactions changed the same entries since."""
        try:
            return store.undo(tx_id, now=self.shared.now(), actor=Actor.USER, progress=progress)
        except ConflictError:
            later = self.later_changes(store, tx_id) if tx_id is not None else []
            if not later:
                raise
            raise ConflictError(
                f"transaction {tx_id} cannot be undone alone: {_ids(later)} changed the same "
                f"entries since; undo {'it' if len(later) == 1 else 'them'} first, or all "
                f"together: memtui undo {store.path} {tx_id} --with-later"
            ) from None

    def later_changes(self, store: MemoryStore, tx_id: int) -> list[Transaction]:
        """The later transactions that changed entries transaction `tx_id` touched (or that
        those changed in turn), newest first: undoing `tx_id` alone would overwrite them."""
        txs = store.transactions()
        target = undo_target(txs, tx_id, store.path)
        touched = {c.id for c in target.changes}
        later = []
        for tx in txs:
            ids = {c.id for c in tx.changes}
            if tx.id > target.id and ids & touched:
                later.append(tx)
                touched |= ids
        return later[::-1]

    def undo_with_later(
        self, store: MemoryStore, tx_id: int, progress: CommitProgress | None = None
    ) -> Transaction:
        """Undo transaction `tx_id` and the later ones that changed its entries since
        (`later_changes`) together, as one new transaction: each entry goes back to how it
        was before the first of them touched it."""
        target = undo_target(store.transactions(), tx_id, store.path)
        later = self.later_changes(store, tx_id)
        group = [target, *later[::-1]]  # oldest first
        first: dict[str, ChangeImage] = {}
        last: dict[str, ChangeImage] = {}
        for tx in group:
            for c in tx.changes:
                if c.lost:
                    raise ConflictError(
                        f"{store.path}: {c.id} was changed outside memtui since transaction "
                        f"{tx.id}; nothing was written"
                    )
                first.setdefault(c.id, c)
                last[c.id] = c
        changes = [
            Change(last[i].after_memory(), c.before_memory(), c.before_raw, c.position)
            for i, c in first.items()
        ]
        return store.commit(
            changes,
            actor=Actor.USER,
            kind="undo",
            reason=f"undo of transactions {_ids(group[::-1])} together",
            now=self.shared.now(),
            undoes=target.id,
            details={"undoes_together": [t.id for t in group]},
            progress=progress,
        )

    def rollback(
        self, store: MemoryStore, backup: str, progress: CommitProgress | None = None
    ) -> Transaction:
        """Make the store what backup `backup` holds, as one undoable transaction; `progress`
        is told its stages."""
        return store.rollback(backup, now=self.shared.now(), actor=Actor.USER, progress=progress)

    def rollback_from_copy(
        self, store: MemoryStore, source: Path, progress: CommitProgress | None = None
    ) -> Transaction:
        """Make a PostgreSQL store what `memtui backup`'s copy `source` holds, as one undoable
        transaction; refused when `source` is not a copy of that table."""
        if not isinstance(store, TableCopies):
            raise MemtuiError(
                f"{store.path} is a file store: roll back to one of its backups by name "
                "(see `memtui backups`)"
            )
        return store.rollback_from_copy(
            source, now=self.shared.now(), actor=Actor.USER, progress=progress
        )

    def backups(self, store: MemoryStore) -> list[Backup]:
        return store.backups()

    def copy_table(self, store: MemoryStore, dest: Path) -> int:
        """A PostgreSQL store's whole table to a JSON Lines file (the Go records); file stores
        keep whole-file backups already."""
        if not isinstance(store, TableCopies):
            raise MemtuiError(
                f"{store.path} is a file store: its backups are whole files already "
                "(see `memtui backups`)"
            )
        return store.dump(dest)

    def compact(
        self, store: MemoryStore, *, keep: int | None = None, days: float | None = None
    ) -> Compaction:
        """Rewrite a native store's journal with changed fields only; with `keep` or `days`,
        move older transactions out of the store file into its sidecar (no longer undoable)."""
        return compact_store(
            file_store(store, "compact"), keep=keep, days=days, now=self.shared.now()
        )


def _ids(txs: list[Transaction]) -> str:
    """#6, #5 and #4."""
    names = [f"#{t.id}" for t in txs]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
