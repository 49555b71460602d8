"""Store formats behind one `Store` API: open, snapshot, commit, undo, rollback.

The names below are imported when first asked for: a module that needs one constant of a
submodule (the config's `DEFAULT_KEEP`) does not load every store format."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memtui.stores.file.backups import DEFAULT_KEEP, Backup
    from memtui.stores.file.store import Change, Store
    from memtui.stores.ledger import Actor, ChangeImage, Transaction
    from memtui.stores.protocol import MemoryStore
    from memtui.stores.transfer import EXPORT_FORMATS, create_native_store, export_store

_DECLARED_IN = {
    "DEFAULT_KEEP": "file.backups",
    "Backup": "file.backups",
    "Change": "file.store",
    "Store": "file.store",
    "Actor": "ledger",
    "ChangeImage": "ledger",
    "Transaction": "ledger",
    "MemoryStore": "protocol",
    "EXPORT_FORMATS": "transfer",
    "create_native_store": "transfer",
    "export_store": "transfer",
}


def __getattr__(name: str) -> Any:
    if name not in _DECLARED_IN:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_DECLARED_IN[name]}"), name)


def open_store(location: str, keep_backups: int | None = None) -> Store:
    """Open a pi, longterm or native store, recognised from its content."""
    from memtui.stores.file.backups import DEFAULT_KEEP
    from memtui.stores.file.store import Store

    return Store.open(location, DEFAULT_KEEP if keep_backups is None else keep_backups)


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
