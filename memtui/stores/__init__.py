"""Store formats behind one `Store` API: open, snapshot, commit, undo, rollback."""

from memtui.stores.file.backups import DEFAULT_KEEP, Backup
from memtui.stores.file.store import Change, Store
from memtui.stores.ledger import Actor, ChangeImage, Transaction
from memtui.stores.protocol import MemoryStore
from memtui.stores.transfer import EXPORT_FORMATS, create_native_store, export_store


def open_store(location: str, keep_backups: int = DEFAULT_KEEP) -> Store:
    """Open a pi, longterm or native store, recognised from its content."""
    return Store.open(location, keep_backups)


__all__ = [
    "DEFAULT_KEEP",
    "EXPORT_FORMATS",
    "Actor",
    "Backup",
    "Change",
    "ChangeImage",
    "MemoryStore",
    "Store",
    "Transaction",
    "create_native_store",
    "export_store",
    "open_store",
]
