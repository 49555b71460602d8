"""What every part of the service shares: the settings, the clock, notices for the user, a
store's history, and where memtui keeps its own files about a store."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from hashlib import sha256
from pathlib import Path
from typing import TypeAlias

from memtui import locations
from memtui.config import Settings, save_setting
from memtui.curate import History, record_of
from memtui.errors import MemtuiError
from memtui.model import Memory
from memtui.stores import MemoryStore
from memtui.stores.store import Store as FileStore
from memtui.textsafe import has_surrogates
from memtui.times import parse_iso_or_none

Store: TypeAlias = MemoryStore
"""What the front ends hold: any store (a file, a database table)."""


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


class ServiceBase:
    """The settings (read once) and the clock every operation reads `now` from."""

    def __init__(
        self, settings: Settings | None = None, clock: Callable[[], datetime] | None = None
    ) -> None:
        self.settings = settings if settings is not None else Settings()
        self._clock = clock or clock_from_env
        self._opened: list[FileStore] = []  # whose sidecar problems are worth a warning
        self._notices: list[str] = []
        self._hinted = False  # the embed extra's install hint is said once
        self._seal_key: bytes | None = None

    def now(self) -> datetime:
        return self._clock()

    def notices(self) -> list[str]:
        """One-line notes for the user gathered since the last call (e.g. how to get
        embeddings), each said once."""
        out, self._notices = self._notices, []
        return out

    def log_error(self, text: str) -> Path | None:
        """Append a bug's traceback to the error log; where it went, or None if it could not
        be written (the front end still says the bug in one line)."""
        path = locations.error_log()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8") as log:
                log.write(f"--- {datetime.now(UTC).isoformat(timespec='seconds')}\n{text}")
        except OSError:
            return None
        return path

    def save_setting(self, table: str, key: str, value: str, path: Path | None = None) -> None:
        """Write one setting to the config file (default: the one in use), keeping the rest of
        it as it is."""
        save_setting(path or self.settings.path or locations.config_file(), table, key, value)

    def history(self, store: Store) -> History:
        """Every image the ledger holds of each entry."""
        return History.of(store)

    def record(self, store: Store, memory_id: str, history: History | None = None) -> Memory | None:
        """The entry as the store holds it, or as the ledger last saw it."""
        return record_of(store, memory_id, history)


def check_text(what: str, text: str) -> None:
    """Refuse text a person gave that holds a lone surrogate (bytes a non-UTF-8 locale could
    not decode): no store is written with it."""
    if has_surrogates(text):
        raise MemtuiError(
            f"{what} is not UTF-8 text (it holds undecodable bytes; is the terminal's encoding "
            "UTF-8?); nothing was written"
        )


def file_store(store: Store, what: str) -> FileStore:
    if isinstance(store, FileStore):
        return store
    raise MemtuiError(f"{store.path}: {what} works on store files, not on a database")


def side_folder(store: Store) -> Path:
    """Where memtui keeps its own files about `store` (embeddings, labels): beside a store
    file, in memtui's data folder for a database."""
    if store.sidecar is not None:
        return store.sidecar
    return locations.data_dir() / "stores" / sha256(str(store.path).encode()).hexdigest()[:16]


def embeddings_folder(store: Store) -> Path:
    """Where the sentence vectors of `store`'s texts are cached: planning and calibration read
    and add to the same cache."""
    return side_folder(store) / "embeddings"
