"""`Store`: an opened store file and the one transaction API that changes it.

Contracts (docs/design.md#transactions): a commit is atomic (temp + rename; for non-native stores a
write-ahead ledger entry, resolved on the next read if the writer died), keeps a backup of the
file it replaces, records before/after images in the ledger, refuses to overwrite entries an
outside writer changed (and re-bases when the entries it touches are unchanged), and undo is a
new transaction.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from memtui import interrupts
from memtui.errors import ConflictError, MemtuiError, NotFoundError, StoreFormatError
from memtui.jsonout import NotOrjson, dumps
from memtui.model import Memory, same_except
from memtui.stores.detect import layout_parts, parse_store, with_layout
from memtui.stores.file import preview
from memtui.stores.file.backups import (
    DEFAULT_KEEP,
    Backup,
    BackupShelf,
    SourceChanged,
    is_packed,
    unpack,
)
from memtui.stores.file.files import (
    FileStamp,
    Hashed,
    atomic_write,
    file_sha256,
    read_bytes,
    real_path,
    remove_stale_temp_files,
    sha256,
)
from memtui.stores.file.files import writing as writing_to
from memtui.stores.file.ledger_audit import LedgerAudit, LedgerState
from memtui.stores.file.sidecar import check_writable, sidecar_problems
from memtui.stores.formats.document import Document, HeaderImages, StoreFormat
from memtui.stores.ledger import (
    ChangeImage,
    ChangesWritten,
    EncodedEntry,
    LedgerViews,
    SidecarLedger,
    Transaction,
    encoded_entry,
    image_diff,
    image_fingerprint,
    read_journal,
    undo_target,
)
from memtui.stores.progress import CommitProgress, Stage
from memtui.traits import FormatTraits

# An outside writer that ignores the lock can slip in between our read and our rename.
_WRITE_ATTEMPTS = 3
# at most this many backups are read for the bytes of entries a write brings back
_HELD_FILES = 4


class _Overtaken(Exception):
    """Another writer replaced the file while this commit was being prepared."""


@dataclass(frozen=True, slots=True)
class Change:
    """One memory before (as the caller saw it) and after; `None` means absent.

    `after_raw` pins the exact record to write in the store's own format (undo, rollback),
    `position` the place in the file of an entry that comes back.
    """

    before: Memory | None
    after: Memory | None
    after_raw: dict[str, Any] | None = None
    position: int | None = None  # where to put an entry that comes back (undo of a removal)

    @property
    def id(self) -> str:
        memory = self.after if self.after is not None else self.before
        assert memory is not None, "a change needs a before or an after"
        return memory.id


class Store(LedgerViews, LedgerAudit):
    place = "on disk"

    def __init__(
        self, path: Path, fmt: StoreFormat, doc: Document, data: bytes, keep_backups: int
    ) -> None:
        self.path = path
        """The store as the user named it (what messages and screens show)."""
        self.file = real_path(path)
        """The file it really is (a symlink followed): read, locked, written, sidecar beside."""
        self.format = fmt
        self._doc = doc
        self._sha = sha256(data)
        self._stamp = self._stamp_now()
        self.sidecar = self.file.with_name(self.file.name + ".memtui")
        self.keep_backups = keep_backups
        self._ledger = (
            None
            if fmt.traits.ledger_in_store
            else SidecarLedger(self.sidecar / "ledger.jsonl", self.file)
        )
        self._ledger_cache: tuple[tuple[str, FileStamp | None], LedgerState] | None = None
        self.packed = False

    # -- reading -----------------------------------------------------------------------------

    @classmethod
    def open(cls, location: str | Path, keep_backups: int = DEFAULT_KEEP) -> Store:
        # a store reached through a symlink is the file the link points to: read, lock, write
        # and keep the sidecar there, so the agent reading the real file sees every change
        path = Path(location).expanduser()
        from memtui.stores.file.folder_store import open_folder_store  # a folder store is a Store

        folder = open_folder_store(path, keep_backups)
        if folder is not None:
            return folder
        data = read_bytes(real_path(path))
        packed = is_packed(data)
        if packed:  # a compressed backup, opened to look at: read, never written
            data = unpack(data, path)
        fmt, doc = parse_store(data, path)
        store = cls(path, fmt, doc, data, keep_backups)
        store.packed = packed
        return store

    @property
    def format_name(self) -> str:
        return self.format.name

    @property
    def traits(self) -> FormatTraits:
        return self.format.traits

    @property
    def fingerprint(self) -> str:
        """sha256 of the file as last read or written."""
        return self._sha

    def memories(self) -> list[Memory]:
        return list(self._doc.memories.values())

    def __len__(self) -> int:
        return len(self._doc.memories)

    def get(self, memory_id: str) -> Memory:
        try:
            return self._doc.memories[memory_id]
        except KeyError:
            raise NotFoundError(f"{self.path}: no memory with id {memory_id!r}") from None

    def find(self, memory_id: str) -> Memory | None:
        return self._doc.memories.get(memory_id)

    def findings(self) -> list[str]:
        """What the format noticed about the store that is not wrong with memtui's own files
        (a Claude Code index line to no file), one line each; nothing is blocked by them."""
        return list(self._doc.header.get("findings", []))

    def journal_bytes(self) -> int | None:
        """About how much of the file its journal takes (compact JSON), for a format that
        keeps the ledger in the store file, which every transaction makes longer; else None."""
        if not self.format.traits.ledger_in_store:
            return None
        journal = self._doc.header.get("journal") or []
        values = sum(e.size if isinstance(e, EncodedEntry) else len(dumps(e)) for e in journal)
        keys = sum(len(str(n)) + 4 for n in range(1, len(journal) + 1))  # "n": and a comma
        return 1 + keys + values if journal else 2

    def file_bytes(self) -> int | None:
        """The store file's size as memtui last read or wrote it (None: not a regular file,
        or a compressed backup, whose size on disk is not what it holds)."""
        if self.packed or not isinstance(self._stamp, FileStamp):
            return None
        return self._stamp.size

    def plan_notes(self, changes: Sequence[Change]) -> list[str]:
        """What the format says of the store as `changes` would leave it (a plan's warnings:
        a limit of the agent's it would pass); nothing is written."""
        return self.format.plan_notes(self._doc, preview.after(self.format, self._doc, changes))

    def document(self) -> Document:
        """A copy of the parsed file (records in the store's own format included)."""
        return self._doc.copy()

    def changed_on_disk(self) -> bool:
        """Whether another writer replaced the file since memtui read or wrote it."""
        if self._stamp_now() == self._stamp:
            return False
        try:
            return sha256(self._read_data()) != self._sha
        except MemtuiError:
            return True

    def reload(self) -> None:
        data = self._read_data()
        fmt, doc = self._parse(data)
        self.format, self._doc = fmt, doc
        self._sha, self._stamp = sha256(data), self._stamp_now()

    # -- where the store's bytes are read and written (a folder store reads a folder) -------

    def _read_data(self) -> bytes:
        return read_bytes(self.file)

    def _data_if_changed(self) -> bytes | None:
        """The file's bytes, or None where they are the ones last read or written (hashed a
        chunk at a time, not held: a commit's backup then copies the file)."""
        return None if file_sha256(self.file) == self._sha else self._read_data()

    def _parse(self, data: bytes) -> tuple[StoreFormat, Document]:
        return parse_store(data, self.path)

    def _stamp_now(self) -> Any:
        return FileStamp.of(self.file)

    def _clean_up(self) -> None:
        remove_stale_temp_files(self.file.parent, self.file.name)

    def _write_data(
        self, data: bytes | Iterable[bytes], mode: int | None, before_rename: Callable[[], None]
    ) -> None:
        atomic_write(self.file, data, mode=mode, before_rename=before_rename)

    # -- the ledger --------------------------------------------------------------------------

    def transactions(self) -> list[Transaction]:
        """Committed transactions, oldest first (read again only when the store or its
        ledger file changed)."""
        return [tx for tx in self._ledger_state().transactions if tx.state == "committed"]

    def problems(self) -> list[str]:
        """What is wrong with the ledger and the sidecar, one line each. Reading works anyway
        (damaged ledger entries are skipped); memtui changes nothing until they are repaired
        (`memtui doctor`)."""
        return [*self._ledger_state().problems, *sidecar_problems(self.sidecar, self._ledger)]

    def _ledger_key(self) -> tuple[str, FileStamp | None]:
        return self._sha, FileStamp.of(self._ledger.path) if self._ledger is not None else None

    def _ledger_state(self) -> LedgerState:
        """The ledger as read with the file as last read or written (read again only when
        either changed since)."""
        key = self._ledger_key()
        if self._ledger_cache is None or self._ledger_cache[0] != key:
            self._ledger_cache = (key, self._read_ledger(self._doc, self._sha))
        return self._ledger_cache[1]

    def _read_ledger(self, doc: Document, sha: str) -> LedgerState:
        """All transactions, those a dead writer left pending (now resolved), and what is
        wrong with the ledger."""
        if self._ledger is None:
            txs, problems = read_journal(doc.header.get("journal", []), doc.memories)
            return LedgerState(txs, [], [f"{self.path}: {p}" for p in problems])
        read = self._ledger.read()
        owner = read.owner
        if owner is not None and owner != str(self.file) and _other_file(owner, self.file):
            problem = (
                f"{self.sidecar}: holds the history of {owner}, not of this store (a sidecar "
                "shared through a link?); memtui will not mix two stores' histories"
            )
            return LedgerState([], [], [problem])
        pending = [tx for tx in read.transactions if tx.state == "pending"]
        for tx in pending:
            tx.state = "committed" if self._landed(tx, doc, sha) else "aborted"
        missing, leftover = self._unrecorded_backups(read, sha)
        problems = list(read.problems)
        if missing:
            problems.append(self._missing_finding(missing))
        return LedgerState(read.transactions, pending, problems, read.lost_through, read, leftover)

    def _landed(self, tx: Transaction, doc: Document, sha: str) -> bool:
        """Whether a transaction whose writer died before marking it did reach the file."""
        if tx.sha_after == sha:
            return True
        return all(doc.raws.get(c.id) == c.after_raw for c in tx.changes) and any(
            doc.raws.get(c.id) != c.before_raw for c in tx.changes
        )

    # -- backups -----------------------------------------------------------------------------

    @property
    def _shelf(self) -> BackupShelf:
        return BackupShelf(self.sidecar / "backups", self.file.suffix or ".json", self.keep_backups)

    def backups(self) -> list[Backup]:
        """Newest first by transaction: `1` is the file before the newest transaction."""
        return self._shelf.list(self._recorded_backups())

    def _recorded_backups(self) -> set[str]:
        return {t.backup for t in self.transactions() if t.backup}

    def keep_backup(self, data: bytes, now: datetime) -> str:
        """Keep `data` in the backups outside any transaction (a repair); never pruned."""
        return self._shelf.add(data, now, 0).name

    @property
    def sidecar_ledger(self) -> SidecarLedger | None:
        return self._ledger

    # -- changing ----------------------------------------------------------------------------

    def new_id(self, now: datetime) -> str:
        return self.format.new_id(self._doc, now)

    def visible(self, memory: Memory | None) -> Memory | None:
        """What this store's file would hold for `memory` (pi holds active entries only)."""
        if memory is None or not self.format.keeps(memory):
            return None
        if self.format.traits.ledger_in_store:  # the file holds the record as it is (`_as_stored`)
            return memory
        raw = self.format.encode(memory, self._doc.raws.get(memory.id)) or {}
        return self._as_stored(memory, raw)

    def returns_as(self, record: dict[str, Any], memory: Memory) -> bool:
        try:
            return self.format.decode(record, self.path) == self.visible(memory)
        except MemtuiError:
            return False

    def _as_stored(self, memory: Memory, raw: dict[str, Any]) -> Memory:
        """`memory` as the file holds it once written as `raw` (non-native formats drop the
        fields they cannot hold; the successor link is derived from the other entries)."""
        if self.format.traits.ledger_in_store:
            return memory
        return self.format.decode(raw, self.path).with_(superseded_by=memory.superseded_by)

    def commit(
        self,
        changes: Sequence[Change],
        *,
        actor: str,
        kind: str,
        reason: str,
        now: datetime,
        undoes: int | None = None,
        details: dict[str, Any] | None = None,
        revert_header: HeaderImages | None = None,
        earlier: bytes | Callable[[], bytes | None] | None = None,
        progress: CommitProgress | None = None,
    ) -> Transaction:
        """Apply `changes` as one transaction; returns it as recorded in the ledger.

        `revert_header` (undo, rollback): the format's top-level bookkeeping as it was and as
        memtui left it; only what memtui changed and nobody changed since is reverted.
        `earlier`: a file (a backup) that held the entries this write brings back, so a format
        that keeps bytes can write them as they were (or how to read it: read only when the
        format asks for it).
        `progress`: told each stage (checking, preparing, backup, ledger, writing) with counts.

        Raises ConflictError (nothing written) when an entry it touches is no longer what the
        change's `before` says, StoreLockedError when another process holds the lock.
        """
        if not changes:
            raise MemtuiError("nothing to change")
        if self.packed:
            raise MemtuiError(
                f"{self.path}: is a compressed backup; memtui changes nothing in it (restore "
                "it with `memtui rollback`)"
            )
        ids = [c.id for c in changes]
        if len(set(ids)) != len(ids):
            raise ValueError("a transaction touches each memory once")
        check_writable(self.file)
        blocking = sidecar_problems(self.sidecar, self._ledger)
        if blocking:
            raise StoreFormatError(f"{blocking[0]}; nothing was written (see `memtui doctor`)")
        with self.format.write_lock(self.file):
            self._clean_up()
            for _ in range(_WRITE_ATTEMPTS):
                tx = self._commit_locked(
                    changes,
                    actor,
                    kind,
                    reason,
                    now,
                    undoes,
                    details,
                    revert_header,
                    earlier,
                    progress,
                )
                if tx is not None:
                    return tx
            raise ConflictError(
                f"{self.path}: another program kept rewriting the file while memtui wrote it "
                f"({_WRITE_ATTEMPTS} attempts); nothing was written"
            )

    def _commit_locked(
        self,
        changes: Sequence[Change],
        actor: str,
        kind: str,
        reason: str,
        now: datetime,
        undoes: int | None,
        details: dict[str, Any] | None,
        revert_header: HeaderImages | None,
        earlier: bytes | Callable[[], bytes | None] | None,
        progress: CommitProgress | None,
    ) -> Transaction | None:
        stamp = self._stamp_now()  # before the bytes: a later replacement is caught at the end
        data = self._data_if_changed()
        sha = self._sha if data is None else sha256(data)
        if sha == self._sha:
            fmt, base = self.format, self._doc
        else:
            assert data is not None
            fmt, base = self._parse(data)
        if fmt.name != self.format.name:
            raise ConflictError(
                f"{self.path}: the file was replaced by a {fmt.name} store while open; "
                "nothing was written"
            )
        self._check_unchanged(changes, base, progress)
        ledger = self._ledger_state() if base is self._doc else self._read_ledger(base, sha)
        if ledger.problems:
            raise StoreFormatError(
                f"{ledger.problems[0]}; memtui adds nothing to a damaged ledger until it is "
                "repaired (`memtui doctor STORE --fix`); nothing was written"
            )
        history = ledger.transactions
        tx_id = max([t.id for t in history] + [ledger.lost_through], default=0) + 1

        doc = base.copy()
        added = 0 if revert_header else sum(1 for c in changes if c.before is None and c.after)
        fmt.write_header(doc, now, added=added, revert=revert_header)
        images: list[ChangeImage] = []
        in_file = fmt.traits.ledger_in_store
        written = ChangesWritten() if in_file else None  # the journal entry's changes
        order = {ident: n for n, ident in enumerate(base.memories)}
        returning: list[tuple[int, str]] = []
        preparing = Stage(progress, "preparing", len(changes))
        for done, change in enumerate(changes):
            preparing.tick(done)
            ident = change.id
            before_raw = base.raws.get(ident)
            after_raw: dict[str, Any] | None = None
            after = change.after
            after_image = after.to_dict() if after is not None else None
            exact = False  # whether the record is the one `after_image` re-encodes to
            if after is not None and fmt.keeps(after):
                assert after_image is not None
                encoded = change.after_raw
                if not encoded:
                    encoded, exact = fmt.encode_image(after, after_image, before_raw)
                assert encoded is not None
                after_raw = fmt.successor(encoded, before_raw)
                stored = self._as_stored(after, after_raw)
                if after_raw is not encoded:  # the format moved its version counter on
                    after = after.with_(version=stored.version)
                    after_image, exact = after.to_dict(), False
                doc.memories[ident] = stored
                doc.raws[ident] = after_raw
                if ident not in order and change.position is not None:
                    returning.append((change.position, ident))
            else:
                doc.memories.pop(ident, None)
                doc.raws.pop(ident, None)
            before = change.before if change.before is not None else base.memories.get(ident)
            before_image = before.to_dict() if before is not None else None
            before_rec = (
                None
                if before_raw is None or before_image is None
                else fmt.record_image(before_image, before_raw)
            )
            after_rec = (
                None
                if after_raw is None or after_image is None or exact
                else fmt.record_image(after_image, after_raw)
            )
            # the journal keeps the changed fields only where the file's records give both
            # images back exactly (see ledger.resolve_images)
            compact = (
                in_file
                and before_rec is None
                and after_rec is None
                and before_image is not None
                and after_raw is not None
                and fmt.decode(after_raw, self.path) == after
            )
            # the images are held as the entries (their dicts made again when read), so that
            # a whole-store transaction holds no two dicts per entry
            diff = fp = None
            if compact:
                assert before_image is not None and after_image is not None
                diff, fp = image_diff(before_image, after_image), image_fingerprint(after_image)
            image = ChangeImage(
                ident,
                before,
                after,
                before_rec,
                after_rec,
                order.get(ident),
                compact=compact,
                diff=diff,
                after_fp=fp,
                made=compact,
            )
            images.append(image)
            if written is not None:
                written.add(image)
        preparing.end()
        if returning:
            _move_to_positions(doc, sorted(returning))
        saving = Stage(progress, "backup", 1)
        for leftover in ledger.leftover_backups:  # the same bytes as the backup made now
            self._shelf.discard(leftover)
        backup: Backup | None = None
        pending: int | None = None
        cut: set[int] = set()
        held = False

        streamed = False  # the new file made while it is written: checked again once made
        # (and when it is made whole after all: the stat is cheap)

        def at_commit() -> None:
            """The commit point: a signal from here on waits (see `interrupts`)."""
            nonlocal held
            if streamed and self._stamp_now() != stamp:
                raise _Overtaken  # another writer got in while the file was made
            interrupts.hold()
            held = True

        try:
            try:
                backup = self._shelf.add(self.file if data is None else data, now, tx_id, sha)
            except SourceChanged:
                raise _Overtaken from None
            saving.end()
            tx = Transaction(
                tx_id,
                now,
                actor,
                kind,
                reason,
                images,
                undoes,
                backup.name,
                "committed",
                details=dict(details or {}),
            )
            tx.header_before, tx.header_after = fmt.header(base), fmt.header(doc)
            layout = base.header.get("layout_bytes")
            # the bytes this write replaces, and earlier ones: a format may keep some of them
            before_files = self._held_before(changes, base, history)
            replaced = backup
            doc.header["sources"] = _Sources(
                [lambda: self._shelf.read(replaced), earlier, *before_files]
            )
            del data  # in the backup now, read again only by a format that keeps bytes
            recording = Stage(progress, "ledger", len(images))
            new_data: bytes | Hashed
            if in_file:
                entry = encoded_entry(tx, written)
                written = None
                doc.header["journal"] = [*doc.header.get("journal", []), entry]
                recording.end()
                writing = Stage(progress, "writing", 1)
                # made while it is written: the new file is never whole in memory
                new_data = Hashed(layout_parts(fmt.render_parts(doc, now), layout))
                streamed = True
            else:
                assert self._ledger is not None
                cut = self._settle(ledger)
                new_data = with_layout(fmt.render(doc, now), layout)
                tx.sha_after = sha256(new_data)
                tx.state = "pending"
                pending = self._ledger.end()
                self._ledger.add_pending(tx)  # written ahead: the file follows
                recording.end()
                writing = Stage(progress, "writing", 1)
                doc.header.pop("sources", None)  # rendered: the bytes it replaces let go of
            if self._stamp_now() != stamp:
                raise _Overtaken
            try:
                # (the size of the file it replaces, for a file made while it is written)
                needs = len(new_data) if isinstance(new_data, bytes) else stamp.size
                with writing_to(self.file, needs):
                    self._write_data(new_data, fmt.rewrite_mode, at_commit)
            except NotOrjson:  # a value only the standard library writes: the file made whole
                new_data = with_layout(fmt.render(doc, now), layout)
                if self._stamp_now() != stamp:
                    raise _Overtaken from None
                with writing_to(self.file, len(new_data)):
                    self._write_data(new_data, fmt.rewrite_mode, at_commit)
            doc.header.pop("sources", None)
            writing.end()
        except BaseException as e:
            # the transaction did not happen: neither does its backup, nor its ledger entry
            if backup is not None:
                self._shelf.discard(backup)
            # cut its intent off again (no space needed); where that fails, mark it
            if (
                pending is not None
                and self._ledger is not None
                and not self._ledger.retract(pending)
            ):
                self._ledger.mark(tx_id, "aborted")
            if held:
                interrupts.unhold()
            if isinstance(e, _Overtaken):
                return None
            raise
        if self._ledger is not None:
            self._ledger.mark(tx_id, "committed")
            tx.state = "committed"
        self._shelf.prune({t.backup for t in history if t.backup} | {backup.name})
        self.format, self._doc = fmt, doc
        self._sha = sha256(new_data) if isinstance(new_data, bytes) else new_data.sha
        self._stamp = self._stamp_now()
        # the ledger as a fresh read would give it, without reading it
        kept = [t for t in history if t.id not in cut]
        self._ledger_cache = (
            self._ledger_key(),
            LedgerState([*kept, tx], [], [], ledger.lost_through),
        )
        return tx

    def _settle(self, ledger: LedgerState) -> set[int]:
        """Record how the transactions a dead writer left pending ended: an aborted one's
        lines are cut off where they are the ledger's last ones (marked otherwise), and its
        backup is removed; returns the ids cut off."""
        assert self._ledger is not None
        cut: set[int] = set()
        aborted = {t.id for t in ledger.pending if t.state == "aborted"}
        tail = ledger.read.tail_of(aborted) if ledger.read is not None and aborted else None
        if tail is not None and self._ledger.retract(tail):
            cut = aborted
        for old in ledger.pending:
            if old.id in cut:
                if old.backup:
                    self._discard_backup(old.backup)
                continue
            self._ledger.mark(old.id, old.state)
        return cut

    def _refuse_when_unusable(self) -> None:
        """Undo and rollback need the ledger and backups: say what is wrong with them first."""
        check_writable(self.file)
        problems = self.problems()
        if problems:
            raise StoreFormatError(
                f"{problems[0]}; memtui changes nothing until it is repaired (see `memtui doctor`)"
            )

    def _check_unchanged(
        self,
        changes: Sequence[Change],
        base: Document,
        progress: CommitProgress | None = None,
    ) -> None:
        # the version counter is not compared: memtui moves it forward itself on every change
        # (so an undo's images hold older versions), and the agent's real edits change more
        checking = Stage(progress, "checking", len(changes))
        stale = []
        for done, c in enumerate(changes):
            checking.tick(done)
            if not _same_but_version(base.memories.get(c.id), self.visible(c.before)):
                stale.append(c.id)
        if stale:
            shown = ", ".join(stale[:5]) + (f" and {len(stale) - 5} more" if len(stale) > 5 else "")
            raise ConflictError(
                f"{self.path}: changed since memtui read it; {len(stale)} of the entries this "
                f"change touches differ ({shown}); nothing was written — read the store again "
                "(ctrl+r in the TUI; `memtui outside STORE` lists what the agent changed) and "
                "try again"
            )
        checking.end()

    # -- undo and rollback -------------------------------------------------------------------

    def undo(
        self,
        tx_id: int | None = None,
        *,
        now: datetime,
        actor: str = "user",
        reason: str = "",
        progress: CommitProgress | None = None,
    ) -> Transaction:
        """Revert a transaction (default: the newest one not undone) as a new transaction."""
        self._refuse_when_unusable()
        gap = self.lost_through()
        found: Transaction | None = None
        try:
            found = undo_target(self.transactions(), tx_id, self.path)
        except NotFoundError:
            if tx_id is not None or not gap:
                raise
        if tx_id is None and (found is None or found.id <= gap):
            newest = "holds none" if found is None else f"holds ({found.id})"
            raise MemtuiError(
                f"{self.path}: the ledger lost the transactions up to {gap} (`memtui doctor` "
                f"recorded the gap), so the newest one it {newest} is not the last change; "
                f"name the one to undo: `memtui undo {self.path} ID` (see `memtui history`)"
            )
        assert found is not None
        target = found
        lost = [c.id for c in target.changes if c.lost]
        if lost:
            raise ConflictError(
                f"{self.path}: changed since memtui read it; {len(lost)} of the entries "
                f"transaction {target.id} touched differ ({', '.join(lost[:5])}); nothing was "
                "written"
            )
        changes = [
            Change(c.after_memory(), c.before_memory(), c.before_raw, c.position)
            for c in target.changes
        ]
        what = f"undo of transaction {target.id} ({target.kind})"
        return self.commit(
            changes,
            actor=actor,
            kind="undo",
            reason=reason or what,
            now=now,
            undoes=target.id,
            revert_header=self._header_revert(target),
            earlier=lambda: self._backup_bytes(target.backup),
            progress=progress,
        )

    def _header_revert(self, target: Transaction) -> HeaderImages | None:
        """The format's bookkeeping before and after `target`. Before it: what `target` found,
        or, when that was left by earlier transactions now undone, what they found (undos
        made out of order then still end where the first of them began)."""
        images = _header_images(target.header_before, target.header_after)
        if images is None:
            return None
        before, after = images
        undone = self.undone()
        for tx in reversed(self.transactions()):
            if tx.id < target.id and tx.id in undone and tx.header_after == before:
                before = tx.header_before or before
        return before, after

    def _held_before(
        self, changes: Sequence[Change], base: Document, history: list[Transaction]
    ) -> list[bytes]:
        """The files (backups) that last held the entries these changes bring back: the one
        before each transaction that took such an entry out of the file."""
        back = {c.id for c in changes if c.after_raw is not None and c.id not in base.raws}
        names: list[str] = []
        for tx in reversed(history):
            if not back or len(names) >= _HELD_FILES:
                break
            out = {c.id for c in tx.changes if c.after_raw is None and c.before_raw is not None}
            if back & out and tx.backup is not None:
                names.append(tx.backup)
                back -= out
        held = [self._backup_bytes(name) for name in dict.fromkeys(names)]
        return [data for data in held if data is not None]

    def _backup_bytes(self, name: str | None) -> bytes | None:
        """The file a backup holds, if it is still there."""
        if name is None:
            return None
        try:
            return self._shelf.read(self._shelf.find(name, self._recorded_backups()))
        except MemtuiError:
            return None

    def rollback(
        self,
        name: str,
        *,
        now: datetime,
        actor: str = "user",
        progress: CommitProgress | None = None,
    ) -> Transaction:
        """Make the store's entries what a backup holds, as one (undoable) transaction."""
        self._refuse_when_unusable()
        backup = self._shelf.find(name, self._recorded_backups())
        kept = self._shelf.read(backup)
        fmt, old = parse_store(kept, backup.path)
        if fmt.name != self.format.name:
            raise MemtuiError(f"backup {backup.name} is a {fmt.name} store, not {self.format.name}")
        current = self._doc
        changes = []
        old_order = {ident: n for n, ident in enumerate(old.memories)}
        for ident in dict.fromkeys([*current.memories, *old.memories]):
            now_m, then_m = current.memories.get(ident), old.memories.get(ident)
            if now_m != then_m or current.raws.get(ident) != old.raws.get(ident):
                changes.append(Change(now_m, then_m, old.raws.get(ident), old_order.get(ident)))
        # what memtui last wrote: keys the agent changed since stay as the agent left them
        last = next((t for t in reversed(self.transactions()) if t.header_after), None)
        written = last.header_after if last is not None else fmt.header(current)
        header = _header_images(fmt.header(old), written)
        if not changes:
            raise MemtuiError(f"the store already holds what backup {backup.name} holds")
        return self.commit(
            changes,
            actor=actor,
            kind="rollback",
            reason=f"rollback to backup {backup.name}",
            now=now,
            details={"backup": backup.name},
            revert_header=header,
            earlier=kept,
            progress=progress,
        )


class _Sources(Sequence[bytes]):
    """The bytes a write replaces, then earlier files (backups), each given as bytes or as how
    to read it and read only when a format looks that far (those that keep some bytes of a
    file: pi, Hermes, Claude Code), so that a write of a format that never does holds no copy
    of the file it replaces and an undo reads no backup."""

    def __init__(self, sources: list[bytes | Callable[[], bytes | None] | None]) -> None:
        self._rest = list(reversed(sources))
        self._all: list[bytes] = []

    def _upto(self, index: int) -> bool:
        """Whether source `index` is there, read as far as it if need be."""
        while len(self._all) <= index and self._rest:
            source = self._rest.pop()
            data = source() if callable(source) else source
            if data is not None:
                self._all.append(data)
        return index < len(self._all)

    def __iter__(self) -> Iterator[bytes]:
        index = 0
        while self._upto(index):
            yield self._all[index]
            index += 1

    def __len__(self) -> int:
        self._upto(sys.maxsize)
        return len(self._all)

    def __getitem__(self, index: Any) -> Any:
        self._upto(sys.maxsize)
        return self._all[index]


def _other_file(owner: str, path: Path) -> bool:
    """Whether `owner` is an existing file other than `path` (a store moved with its
    sidecar leaves no file behind at its old path)."""
    try:
        return not os.path.samefile(owner, path)
    except OSError:
        return False


_VERSION = frozenset({"version"})


def _same_but_version(a: Memory | None, b: Memory | None) -> bool:
    """Whether two entries are equal in every field but the version counter."""
    if a is None or b is None:
        return a is b
    return a is b or same_except(a, b, _VERSION)


def _header_images(
    before: dict[str, Any] | None, after: dict[str, Any] | None
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    if before is None or after is None:
        return None
    return before, after


def _move_to_positions(doc: Document, returning: list[tuple[int, str]]) -> None:
    """Put entries that came back at their old places in the file order (ascending)."""
    back = {ident for _, ident in returning}
    order = [ident for ident in doc.memories if ident not in back]
    for position, ident in returning:
        order.insert(min(position, len(order)), ident)
    doc.memories = {ident: doc.memories[ident] for ident in order}
