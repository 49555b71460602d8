"""What every part of the service shares: the settings, the clock, notices for the user, a
store's history as its ledger holds it, and where memtui keeps its own files about a store."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from hashlib import sha256
from pathlib import Path
from typing import TYPE_CHECKING

from memtui import locations
from memtui.config import Settings
from memtui.errors import MemtuiError
from memtui.model import Memory
from memtui.stores import MemoryStore, Transaction
from memtui.stores.ledger import ChangeImage
from memtui.textsafe import has_surrogates
from memtui.times import parse_iso_or_none

if TYPE_CHECKING:
    from memtui.stores.file.store import Store as FileStore


def clock_from_env() -> datetime:
    """The clock, or `$MEMTUI_NOW` (RFC 3339) for reproducible runs."""
    fixed = os.environ.get("MEMTUI_NOW")
    return parse_time(fixed, "MEMTUI_NOW") if fixed else datetime.now(UTC)


def parse_time(text: str, what: str) -> datetime:
    """A user-given RFC 3339 time, or a one-line error naming `what`."""
    when = parse_iso_or_none(text)
    if when is None:
        raise MemtuiError(f"{what} {text!r} is not an RFC 3339 time")
    return when


class Shared:
    """What every part of the service is given: the settings (read once), the clock every
    operation reads `now` from, and what the parts gather for the user between calls."""

    def __init__(
        self, settings: Settings | None = None, clock: Callable[[], datetime] | None = None
    ) -> None:
        self.settings = settings if settings is not None else Settings()
        self.clock = clock or clock_from_env
        self.opened: list[FileStore] = []  # whose sidecar problems are worth a warning
        self.notices: list[str] = []
        self.hinted = False  # the embed extra's install hint is said once

    def now(self) -> datetime:
        return self.clock()


class Part:
    """A part of the service: what it needs of the others is handed to it."""

    def __init__(self, shared: Shared) -> None:
        self.shared = shared


@dataclass(slots=True)
class History:
    """Every image the ledger holds of each entry, oldest first."""

    images: dict[str, list[tuple[Transaction, ChangeImage]]] = field(default_factory=dict)

    @classmethod
    def of(cls, store: MemoryStore) -> History:
        history = cls()
        for tx in store.transactions():
            for change in tx.changes:
                history.images.setdefault(change.id, []).append((tx, change))
        return history

    def latest(self, ident: str) -> ChangeImage | None:
        images = self.images.get(ident)
        return images[-1][1] if images else None

    def created_by_merge(self, ident: str) -> bool | None:
        """True if a transaction created it, False if it existed before, None if unknown."""
        images = self.images.get(ident)
        if not images:
            return None
        first = images[0][1]
        return first.before is None


def record_of(store: MemoryStore, ident: str, history: History | None = None) -> Memory | None:
    """The entry as the store holds it, or as the ledger last saw it (pi stores drop merged
    and superseded entries from the file; their records live on in the ledger). Lineage fields
    the file cannot hold come from the ledger."""
    history = history or History.of(store)
    current = store.find(ident)
    image = history.latest(ident)
    remembered = image.after_memory() if image is not None else None
    if current is None:
        return remembered
    if remembered is not None and not store.traits.lineage_in_store:
        return current.with_(
            supersedes=remembered.supersedes,
            superseded_by=remembered.superseded_by,
            superseded_at=remembered.superseded_at,
        )
    return current


def check_text(what: str, text: str) -> None:
    """Refuse text a person gave that holds a lone surrogate (bytes a non-UTF-8 locale could
    not decode): no store is written with it."""
    if has_surrogates(text):
        raise MemtuiError(
            f"{what} is not UTF-8 text (it holds undecodable bytes; is the terminal's encoding "
            "UTF-8?); nothing was written"
        )


def file_store(store: MemoryStore, what: str) -> FileStore:
    from memtui.stores.file.store import Store as FileStore

    if isinstance(store, FileStore):
        return store
    raise MemtuiError(f"{store.path}: {what} works on store files, not on a database")


def side_folder(store: MemoryStore) -> Path:
    """Where memtui keeps its own files about `store` (embeddings, labels): beside a store
    file, in memtui's data folder for a database."""
    if store.sidecar is not None:
        return store.sidecar
    return locations.data_dir() / "stores" / sha256(str(store.path).encode()).hexdigest()[:16]


def embeddings_folder(store: MemoryStore) -> Path:
    """Where the sentence vectors of `store`'s texts are cached: planning and calibration read
    and add to the same cache."""
    return side_folder(store) / "embeddings"
