"""A store that is a folder of files (Claude Code's memory folder): the file store's
transaction API (ledger, backups, undo, conflict checks) over the folder taken as one value.

The folder is read as `folder_tx.pack` of its files, so the hash, the backups, the ledger's
`sha_after` and the conflict check work on it as on one file; it is written by
`folder_tx.commit` (write-ahead intent, temps, renames). Each file's times come from `stat`,
kept beside the packed value (they are no part of its hash: a touch is no change)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from memtui.errors import StoreFormatError
from memtui.stores.detect import parse_store
from memtui.stores.file import folder_tx
from memtui.stores.file.backups import DEFAULT_KEEP
from memtui.stores.file.files import real_path, writing
from memtui.stores.file.store import Change, Store, _Overtaken
from memtui.stores.formats.claude_code import KIND, MEMBER_PATTERNS, claude_folder
from memtui.stores.formats.document import Document, StoreFormat
from memtui.stores.formats.hermes_folder import KIND as HERMES_KIND
from memtui.stores.formats.hermes_folder import PATTERNS as HERMES_FILES
from memtui.stores.formats.hermes_folder import hermes_folder
from memtui.stores.ledger import Transaction
from memtui.times import format_iso


class FolderStore(Store):
    kind = KIND
    """The `folder_tx.pack` tag of the folder's format."""
    patterns: tuple[str, ...] = MEMBER_PATTERNS
    """The folder's files that are the store."""
    merges_into_base = True
    """A merge writes into the base's file (Claude Code: one memory a file)."""
    recovered: str | None = None
    """What opening it finished of a change an interrupted memtui had decided."""
    _times: dict[str, tuple[float, float]] = {}  # noqa: RUF012 (replaced, never changed)

    @classmethod
    def open_folder(cls, folder: Path, keep_backups: int = DEFAULT_KEEP) -> FolderStore:
        """The store is the folder (also when the user named its MEMORY.md)."""
        sidecar = folder.with_name(folder.name + ".memtui")
        recovered = folder_tx.recover(folder, sidecar)  # before anything else is read
        data, times = _read(folder, cls.kind, cls.patterns)
        fmt, doc = parse_store(data, folder)
        _with_times(doc, times)
        store = cls(folder, fmt, doc, data, keep_backups)
        store._times = times
        store.recovered = recovered
        return store

    def commit(self, changes: Sequence[Change], **kwargs: Any) -> Transaction:
        if self.merges_into_base:
            changes = self._into_base_files(changes)
        return super().commit(changes, **kwargs)

    def plan_notes(self, changes: Sequence[Change]) -> list[str]:
        if self.merges_into_base:
            changes = self._into_base_files(changes)
        return super().plan_notes(changes)

    def _into_base_files(self, changes: Sequence[Change]) -> list[Change]:
        """A merge writes its entry into the base's file: the base's own frontmatter (unknown
        keys, comments) with the merged values spliced in, not a new file."""
        out = list(changes)
        retired = {c.id for c in changes if c.after is not None and not self.format.keeps(c.after)}
        raws = self._doc.raws
        for n, c in enumerate(out):
            if c.before is not None or c.after is None or c.after_raw is not None:
                continue
            members = [raws[i] for i in c.after.supersedes if i in retired and i in raws]
            if not members:
                continue
            # the base's file; where the index does not list it, a listed member's (so Claude
            # Code still sees the merged memory)
            wanted = str(c.after.extra.get("file"))
            members.sort(key=lambda raw: ("title" not in raw, raw.get("file") != wanted))
            base = members[0]
            after = c.after.with_(extra={**c.after.extra, "file": base.get("file")})
            raw = self.format.encode(after, base)
            if raw is not None:
                out[n] = Change(c.before, after, {**raw, "id": after.id}, c.position)
        return out

    def packed_bytes(self) -> bytes:
        """The folder as one value, as its backups keep it."""
        return self._read_data()

    # -- the hooks `Store` reads and writes through ------------------------------------------

    def _names(self) -> list[str]:
        return folder_tx.member_names(self.file, self.patterns)

    def _stamp_now(self) -> Any:
        return folder_tx.fingerprint(self.file, self._names())

    def _read_data(self) -> bytes:
        data, self._times = _read(self.file, self.kind, self.patterns)
        return data

    def _data_if_changed(self) -> bytes | None:
        return self._read_data()  # a folder's backup is its members' image: always made

    def _parse(self, data: bytes) -> tuple[StoreFormat, Document]:
        fmt, doc = parse_store(data, self.path)
        _with_times(doc, getattr(self, "_times", {}))
        return fmt, doc

    def _clean_up(self) -> None:
        folder_tx.recover(self.file, self.sidecar)

    def _write_data(
        self, data: bytes | Iterable[bytes], mode: int | None, before_rename: Callable[[], None]
    ) -> None:
        data = data if isinstance(data, bytes) else b"".join(data)
        before = folder_tx.read_members(self.file, self._names())
        current = orjson.loads(data)["files"]
        after = {name: text.encode("utf-8") for name, text in current.items()}
        try:
            with writing(self.file, len(data)):
                folder_tx.commit(
                    self.file,
                    self.sidecar,
                    before,
                    after,
                    new_mode=self.format.file_mode,
                    before_rename=before_rename,
                )
        except folder_tx.Overtaken:
            raise _Overtaken from None


def _read(
    folder: Path, kind: str, patterns: tuple[str, ...]
) -> tuple[bytes, dict[str, tuple[float, float]]]:
    names = folder_tx.member_names(folder, patterns)
    raw = folder_tx.read_members(folder, names)
    files: dict[str, str] = {}
    times: dict[str, tuple[float, float]] = {}
    for name, data in raw.items():
        try:
            files[name] = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise StoreFormatError(
                f"{folder / name}: not valid UTF-8 (byte 0x{data[e.start]:02X} at offset "
                f"{e.start}); the agent's memory files are UTF-8 text"
            ) from None
        st = os.stat(folder / name)
        times[name] = (min(st.st_ctime, st.st_mtime), st.st_mtime)
    return folder_tx.pack(kind, files), times


def _with_times(doc: Document, times: dict[str, tuple[float, float]]) -> None:
    for ident, raw in doc.raws.items():
        name = str(raw.get("file", ident))
        if name not in times or "updated" in raw:
            continue
        created, updated = times[name]
        raw["created"] = format_iso(from_timestamp(created))
        raw["updated"] = format_iso(from_timestamp(updated))
        doc.raws[ident] = raw  # a record read is a copy: it is set again
        doc.memories[ident] = doc.memories[ident].with_(
            created_at=from_timestamp(created), updated_at=from_timestamp(updated)
        )


def open_folder_store(path: Path, keep_backups: int) -> FolderStore | None:
    """The folder store `path` names, None when it names no folder store."""
    folder = claude_folder(path)
    if folder is not None:
        return FolderStore.open_folder(real_path(folder), keep_backups)
    hermes = hermes_folder(path)
    if hermes is not None:
        return HermesFolderStore.open_folder(hermes, keep_backups)
    return None


class HermesFolderStore(FolderStore):
    """Hermes' `memories` folder: MEMORY.md and USER.md as one store (two users)."""

    kind = HERMES_KIND
    patterns = HERMES_FILES
    merges_into_base = False


def from_timestamp(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)
