"""Rolling backups: the store file as it was before each commit, newest N kept.

The newest backup is the file as it was; older ones of stores over PACK_OVER bytes are
gzip-compressed in place (same name: `gzip -dc` reads them, and so do rollback and
`Store.open`; a small store's backups stay plain, where compressing saves little). A backup
identical to the one before it is a hard link to it, not a second copy."""

from __future__ import annotations

import contextlib
import gzip
import os
import re
import zlib
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memtui.errors import NotFoundError, StoreFormatError
from memtui.stores.file.files import (
    CHUNK,
    Hashed,
    atomic_write,
    file_chunks,
    gzipped,
    read_bytes,
    read_failure,
    writing,
)

_GZIP_MAGIC = b"\x1f\x8b"  # no JSON text starts with these bytes


def is_packed(data: bytes) -> bool:
    return data[:2] == _GZIP_MAGIC


class SourceChanged(Exception):
    """The store file was not the one its hash said while its backup was made."""


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError as e:
        raise read_failure(path, e) from None


def _chunks(data: bytes | Path) -> Iterable[bytes]:
    if isinstance(data, bytes):
        view = memoryview(data)
        return (bytes(view[n : n + CHUNK]) for n in range(0, len(data), CHUNK))
    return file_chunks(data)


def unpack(data: bytes, path: Path) -> bytes:
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as e:
        raise StoreFormatError(f"{path}: a damaged compressed backup ({e})") from None


DEFAULT_KEEP = 20
PACK_OVER = 1 << 20
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

    def list(self, recorded: Collection[str] = ()) -> list[Backup]:
        """Newest first, by transaction (a clock set back gives a later transaction an earlier
        time): the backups of `recorded` (the ones the ledger names) first, then the others
        (repairs, compactions, an older history's), newest time first."""
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
        ours = sorted(
            (b for b in out if not recorded or b.name in recorded),
            key=lambda b: (b.tx_id, b.at, b.name),
            reverse=True,
        )
        if not recorded:
            return ours
        others = sorted(
            (b for b in out if b.name not in recorded), key=lambda b: (b.at, b.name), reverse=True
        )
        return ours + others

    def add(self, data: bytes | Path, at: datetime, tx_id: int, sha: str | None = None) -> Backup:
        """Keep `data`: the store's bytes, or its file (copied a chunk at a time; `sha`: the
        hash its bytes must have, else `SourceChanged` and no backup is left)."""
        size = len(data) if isinstance(data, bytes) else _size(data)
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
        previous = next(iter(self.list()), None)
        try:
            if previous is not None and self._same(previous, data, size, sha):
                with contextlib.suppress(OSError):
                    os.link(previous.path, path)
                    return Backup(name, path, at, tx_id, previous.size)
            copied = Hashed(_chunks(data))

            def check() -> None:
                if sha is not None and copied.sha != sha:
                    raise SourceChanged

            with writing(path, size):
                atomic_write(path, copied, mode=0o600, before_rename=check)
        except BaseException:  # an interrupt once the file was in place: no backup is left
            with contextlib.suppress(OSError):
                path.unlink()
            raise
        return Backup(name, path, at, tx_id, copied.size)

    def _same(self, backup: Backup, data: bytes | Path, size: int, sha: str | None) -> bool:
        """Whether `backup` holds `data` (of `size` bytes, hashing to `sha` when given),
        compared a chunk at a time and only when the sizes allow it."""
        try:
            with open(backup.path, "rb") as f:
                packed = is_packed(f.read(2))
                if packed:  # gzip ends with the unpacked size, modulo 2**32
                    f.seek(-4, os.SEEK_END)
                    if int.from_bytes(f.read(4), "little") != size & 0xFFFFFFFF:
                        return False
            if not packed and backup.size != size:
                return False
            ours = Hashed(_chunks(data))
            with gzip.open(backup.path) if packed else open(backup.path, "rb") as theirs:
                for chunk in ours:
                    if theirs.read(len(chunk)) != chunk:
                        return False
                same = not theirs.read(1)
            return same and (sha is None or ours.sha == sha)
        except (OSError, EOFError, zlib.error, StoreFormatError):
            return False

    def read(self, backup: Backup) -> bytes:
        """The store file a backup holds (compressed or not)."""
        data = read_bytes(backup.path)
        return unpack(data, backup.path) if is_packed(data) else data

    def pack(self, backups: Sequence[Backup]) -> None:
        """Compress these backups in place; names that share a file (identical backups) are
        compressed once and still share it."""
        packed: dict[tuple[int, int], Path] = {}
        for backup in backups:
            with contextlib.suppress(OSError, StoreFormatError):
                st = os.stat(backup.path)
                key = (st.st_dev, st.st_ino)
                if key in packed:
                    temp = backup.path.with_name(backup.path.name + ".link")
                    with contextlib.suppress(FileNotFoundError):
                        temp.unlink()
                    os.link(packed[key], temp)
                    os.replace(temp, backup.path)
                    continue
                if st.st_size <= PACK_OVER:
                    continue
                with open(backup.path, "rb") as f:
                    plain = not is_packed(f.read(2))
                if plain:
                    atomic_write(backup.path, gzipped(file_chunks(backup.path), 6), mode=0o600)
                packed[key] = backup.path

    def discard(self, backup: Backup) -> None:
        """Remove the backup of a transaction that did not happen."""
        with contextlib.suppress(OSError):
            backup.path.unlink()

    def prune(self, recorded: set[str]) -> None:
        """Keep the newest `keep` of the backups the ledger records (`recorded`); called once
        a commit has landed, so a failed commit never rotates a real backup out. Other files,
        even named like backups, are not memtui's to delete."""
        ours = [b for b in self.list(recorded) if b.name in recorded]
        for old in ours[self.keep :]:
            with contextlib.suppress(OSError):
                old.path.unlink()
        self.pack(ours[1 : self.keep])

    def find(self, name: str, recorded: Collection[str] = ()) -> Backup:
        """A backup by its name or a unique prefix of it; `1` is the newest, `2` the next (in
        the order of `list`)."""
        backups = self.list(recorded)
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
