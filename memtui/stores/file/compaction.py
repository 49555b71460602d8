"""`memtui compact`: a native store's journal rewritten with changed fields only, and its oldest
transactions (beyond what undo is kept for) moved out of the store file into the sidecar."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from memtui.errors import MemtuiError, StoreFormatError
from memtui.jsonout import dumps
from memtui.stores.detect import parse_store, with_layout
from memtui.stores.file.files import atomic_write, read_bytes, store_lock, writing
from memtui.stores.file.sidecar import check_writable, sidecar_problems
from memtui.stores.file.store import Store
from memtui.stores.formats.document import Document
from memtui.stores.ledger import Transaction, read_journal

ARCHIVE = "journal-archive.jsonl"


@dataclass(frozen=True, slots=True)
class Compaction:
    kept: int
    """Transactions left in the store file (undoable as before)."""
    moved: int
    """Transactions moved to the archive (kept for the record, no longer undoable)."""
    bytes_before: int
    bytes_after: int
    archive: Path | None
    backup: str

    def to_dict(self) -> dict[str, object]:
        return {
            "kept": self.kept,
            "moved": self.moved,
            "bytes_before": self.bytes_before,
            "bytes_after": self.bytes_after,
            "archive": str(self.archive) if self.archive else None,
            "backup": self.backup,
        }


def compact_store(
    store: Store, *, keep: int | None = None, days: float | None = None, now: datetime
) -> Compaction:
    """Rewrite the journal compactly; with `keep` (transactions) or `days`, move the older
    transactions to `<store>.memtui/journal-archive.jsonl`. The newest transaction always
    stays (transaction ids go on from it)."""
    if not store.traits.ledger_in_store:
        raise MemtuiError(
            f"{store.path}: a {store.format_name} store keeps its ledger beside it "
            f"({store.sidecar.name}/ledger.jsonl); compact works on native stores"
        )
    if keep is not None and keep < 1:
        raise MemtuiError("--keep must be at least 1 (transaction ids go on from the newest)")
    if days is not None and days < 0:
        raise MemtuiError("--days cannot be negative")
    check_writable(store.file)
    blocking = sidecar_problems(store.sidecar, store.sidecar_ledger)
    if blocking:
        raise StoreFormatError(f"{blocking[0]}; nothing was written (see `memtui doctor`)")
    with store_lock(store.file):
        data = read_bytes(store.file)
        fmt, doc = parse_store(data, store.path)
        if fmt.name != "native":
            raise MemtuiError(f"{store.path}: the file is no longer a native store")
        txs, problems = read_journal(doc.header.get("journal", []), doc.memories)
        if problems:
            raise StoreFormatError(
                f"{store.path}: {problems[0]}; repair it first (`memtui doctor STORE --fix`)"
            )
        cut = _cut(txs, keep, days, now)
        moved, kept = txs[:cut], txs[cut:]
        archive = None
        if moved:
            archive = store.sidecar / ARCHIVE
            with writing(archive):
                _archive(archive, moved)
        doc.header["journal"] = _compact_entries(kept, doc)
        new_data = with_layout(fmt.render(doc, None), doc.header.get("layout_bytes"))
        backup = store.keep_backup(data, now)
        with writing(store.file, len(new_data)):
            atomic_write(store.file, new_data, mode=fmt.file_mode)
    store.reload()
    return Compaction(len(kept), len(moved), len(data), len(new_data), archive, backup)


def _cut(txs: list[Transaction], keep: int | None, days: float | None, now: datetime) -> int:
    """How many of the oldest transactions move out (never the newest)."""
    cut = 0
    if keep is not None:
        cut = max(cut, len(txs) - keep)
    if days is not None:
        line = now - timedelta(days=days)
        cut = max(cut, sum(1 for tx in txs if tx.at < line))
    return min(cut, max(0, len(txs) - 1))


def _archive(path: Path, moved: list[Transaction]) -> None:
    """Append the moved transactions, whole images, one JSON line each (written and synced
    before the store file drops them)."""
    for tx in moved:
        for change in tx.changes:
            change.compact = change.lost
    lines = b"".join(dumps({"tx": tx.to_dict()}) + b"\n" for tx in moved)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, lines)
        os.fsync(fd)
    finally:
        os.close(fd)


def _compact_entries(kept: list[Transaction], doc: Document) -> list[dict[str, object]]:
    """The kept transactions as journal entries, each change by its changed fields where the
    journal rebuilds its images exactly (checked by reading them back), else whole."""
    memories = doc.memories
    wanted = [
        [(c.before, c.after, c.before_raw, c.after_raw, c.lost) for c in tx.changes] for tx in kept
    ]
    for tx in kept:
        for change in tx.changes:
            change.compact = change.lost or (
                change.before is not None
                and change.after is not None
                and change.before_raw is None
                and change.after_raw is None
            )
    for _ in range(len(kept) + 1):
        entries: list[dict[str, object]] = [tx.to_dict() for tx in kept]
        again, _problems = read_journal(entries, memories)
        wrong = False
        for tx, read, want in zip(kept, again, wanted, strict=True):
            for change, got, expected in zip(tx.changes, read.changes, want, strict=True):
                if (
                    change.compact
                    and not change.lost
                    and (
                        (got.before, got.after, got.before_raw, got.after_raw, got.lost) != expected
                    )
                ):
                    change.compact = False
                    wrong = True
        if not wrong:
            return entries
    raise MemtuiError("the journal could not be rewritten compactly; nothing was written")
