"""Taking changes back: undo, rollback to a backup or a table copy, the backups themselves, and
compacting a native store's journal."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from memtui.errors import MemtuiError
from memtui.service.base import ServiceBase, Store, file_store
from memtui.stores import Actor, Backup, Transaction
from memtui.stores.compaction import Compaction, compact_store
from memtui.stores.progress import CommitProgress


class UndoMixin(ServiceBase):
    """Undo, rollback, backups and compaction."""

    def undo(
        self, store: Store, tx_id: int | None = None, progress: CommitProgress | None = None
    ) -> Transaction:
        """Revert a transaction (default: the newest not undone) as a new one; `progress` is
        told its stages (checking, preparing, backup, ledger, writing) with counts."""
        return store.undo(tx_id, now=self.now(), actor=Actor.USER, progress=progress)

    def rollback(
        self, store: Store, backup: str, progress: CommitProgress | None = None
    ) -> Transaction:
        """Make the store what backup `backup` holds, as one undoable transaction; `progress`
        is told its stages."""
        return store.rollback(backup, now=self.now(), actor=Actor.USER, progress=progress)

    def rollback_from_copy(
        self, store: Store, source: Path, progress: CommitProgress | None = None
    ) -> Transaction:
        """Make a PostgreSQL store what `memtui backup`'s copy `source` holds, as one undoable
        transaction; refused when `source` is not a copy of that table."""
        restore = getattr(store, "rollback_from_copy", None)
        if store.format_name != "postgres" or restore is None:
            raise MemtuiError(
                f"{store.path} is a file store: roll back to one of its backups by name "
                "(see `memtui backups`)"
            )
        return cast(
            Transaction, restore(source, now=self.now(), actor=Actor.USER, progress=progress)
        )

    def backups(self, store: Store) -> list[Backup]:
        return store.backups()

    def copy_table(self, store: Store, dest: Path) -> int:
        """A PostgreSQL store's whole table to a JSON Lines file (the Go records); file stores
        keep whole-file backups already."""
        dump = getattr(store, "dump", None)
        if store.format_name != "postgres" or dump is None:
            raise MemtuiError(
                f"{store.path} is a file store: its backups are whole files already "
                "(see `memtui backups`)"
            )
        return int(dump(dest))

    def compact(
        self, store: Store, *, keep: int | None = None, days: float | None = None
    ) -> Compaction:
        """Rewrite a native store's journal with changed fields only; with `keep` or `days`,
        move older transactions out of the store file into its sidecar (no longer undoable)."""
        return compact_store(file_store(store, "compact"), keep=keep, days=days, now=self.now())
