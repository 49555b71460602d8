"""Rolling backups: the store file as it was before each commit, newest N kept."""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memtui.errors import NotFoundError, StoreFormatError
from memtui.stores.files import atomic_write

DEFAULT_KEEP = 20
_NAME = re.compile(r"^(\d{8}T\d{12})Z-tx(\d+)(?:-\d+)?(\..*)?$")


@dataclass(frozen=True, slots=True)
class Backup:
    name: str
    path: Path
    at: datetime
    tx_id: int
    size: int


class BackupShelf:
    """`<store>.memtui/backups/`, one file per commit, named `<UTC time>Z-tx<id><suffix>`."""

    def __init__(self, folder: Path, suffix: str, keep: int = DEFAULT_KEEP) -> None:
        self.folder = folder
        self.suffix = suffix
        self.keep = max(1, keep)

    def list(self) -> list[Backup]:
        """Newest first."""
        out = []
        # an unusable folder holds no backups (`Store.problems` says why)
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.folder):
                match = _NAME.match(entry.name)
                try:
                    if not match or not entry.is_file(follow_symlinks=False):
                        continue
                    at = datetime.strptime(match[1], "%Y%m%dT%H%M%S%f").replace(tzinfo=UTC)
                    size = entry.stat().st_size
                except (ValueError, OSError):  # not a backup memtui wrote: an impossible date
                    continue
                out.append(Backup(entry.name, Path(entry.path), at, int(match[2]), size))
        out.sort(key=lambda b: (b.at, b.tx_id, b.name), reverse=True)
        return out

    def add(self, data: bytes, at: datetime, tx_id: int) -> Backup:
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as e:
            raise StoreFormatError(
                f"{self.folder}: cannot keep backups there ({e.strerror}); nothing was written"
            ) from None
        stem = f"{at.astimezone(UTC):%Y%m%dT%H%M%S%f}Z-tx{tx_id}"
        name, n = f"{stem}{self.suffix}", 1
        while (self.folder / name).exists():
            n += 1
            name = f"{stem}-{n}{self.suffix}"
        path = self.folder / name
        atomic_write(path, data, mode=0o600)
        return Backup(name, path, at, tx_id, len(data))

    def discard(self, backup: Backup) -> None:
        """Remove the backup of a transaction that did not happen."""
        with contextlib.suppress(OSError):
            backup.path.unlink()

    def prune(self, recorded: set[str]) -> None:
        """Keep the newest `keep` of the backups the ledger records (`recorded`); called once
        a commit has landed, so a failed commit never rotates a real backup out. Other files,
        even named like backups, are not memtui's to delete."""
        for old in [b for b in self.list() if b.name in recorded][self.keep :]:
            with contextlib.suppress(OSError):
                old.path.unlink()

    def find(self, name: str) -> Backup:
        """A backup by its name or a unique prefix of it; `1` is the newest, `2` the next."""
        backups = self.list()
        if name.isdigit() and len(name) <= 3:
            index = int(name) - 1
            if 0 <= index < len(backups):
                return backups[index]
        matches = [b for b in backups if b.name == name] or [
            b for b in backups if b.name.startswith(name)
        ]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise NotFoundError(f"no backup named {name!r} (see `memtui backups`)")
        raise NotFoundError(f"{name!r} matches {len(matches)} backups; give more of the name")
