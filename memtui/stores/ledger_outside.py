"""The record of what other programs (the agent) changed in a store: the last state memtui saw
(`seen.json.gz`: per entry its hash, image, record and place; `seen-head.json`: its small
part, which a look reads and writes alone) and the outside events found against it
(`outside.jsonl`: one `Transaction` of actor "agent" per event, with full before and after
images), kept in the store's side folder and bounded like the journal (older events move
to compressed archives, the oldest archives go).

Where memtui's own transactions explain a difference (newer than the last one the state saw),
it is not an outside change.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import gzip
import hashlib
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from memtui.errors import MemtuiError
from memtui.jsonout import NotOrjson, dumps, dumps_in_parts, literal, loads
from memtui.model import Memory
from memtui.stores.file.files import FileStamp, atomic_write, gzipped
from memtui.stores.file.store import Store
from memtui.stores.ledger import (
    ChangeImage,
    LedgerEntryError,
    SidecarLedger,
    Transaction,
    _loads,
    image_fingerprint,
)
from memtui.stores.protocol import MemoryStore
from memtui.times import format_iso, parse_iso_or_none

AGENT = "agent"
"""The actor of an outside event (memtui's own are user, plan, llm)."""
OUTSIDE = "outside"
SEEN = "seen.json.gz"
HEAD = "seen-head.json"
EVENTS = "outside.jsonl"
ARCHIVE = "outside-archive-{}.jsonl.gz"
# the event log is rolled into an archive past this size; at most KEEP_ARCHIVES are kept
MAX_LOG_BYTES = 4 << 20
KEEP_ARCHIVES = 8

# fields memtui itself moves on every write, or derives from other entries
_OWN_FIELDS = ("version", "superseded_by", "updated_at")


@dataclass(frozen=True, slots=True)
class SeenEntry:
    hash: str
    image: dict[str, Any]
    raw: dict[str, Any] | None
    position: int

    def to_list(self) -> list[Any]:
        return [self.hash, self.image, self.raw, self.position]

    @classmethod
    def from_list(cls, value: Any) -> SeenEntry:
        if not (isinstance(value, list) and len(value) == 4 and isinstance(value[1], dict)):
            raise LedgerEntryError("an entry of the last seen state is damaged")
        return cls(str(value[0]), value[1], value[2], int(value[3]))


@dataclass(slots=True)
class SeenState:
    """The store as memtui last saw it, and the outside event and memtui transaction that
    state includes; `looked_at`/`looked_event`: when the person last looked."""

    at: datetime
    last_tx: int
    last_event: int
    entries: dict[str, SeenEntry]
    looked_at: datetime
    looked_event: int
    # the store's content hash the state was taken from (None: the store has none)
    digest: str | None = None

    def to_dict(self, *, entries: bool = True) -> dict[str, Any]:
        return {
            "at": format_iso(self.at),
            "last_tx": self.last_tx,
            "last_event": self.last_event,
            "looked_at": format_iso(self.looked_at),
            "looked_event": self.looked_event,
            "digest": self.digest,
            "entries": {k: v.to_list() for k, v in self.entries.items()} if entries else {},
        }

    def parts(self) -> Iterator[bytes]:
        """`dumps(self.to_dict())`, its entries a part at a time."""
        rows = ((k, v.to_list()) for k, v in self.entries.items())
        return dumps_in_parts(self.to_dict(entries=False), "entries", rows, pairs=True)

    @classmethod
    def from_dict(cls, d: Any) -> SeenState:
        try:
            at, looked = parse_iso_or_none(d["at"]), parse_iso_or_none(d["looked_at"])
            if at is None or looked is None:
                raise LedgerEntryError("a time is damaged")
            return cls(
                at,
                int(d["last_tx"]),
                int(d["last_event"]),
                {str(k): SeenEntry.from_list(v) for k, v in d["entries"].items()},
                looked,
                int(d["looked_event"]),
                _opt_str(d.get("digest")),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise LedgerEntryError(f"is damaged ({e})") from None


@dataclass(frozen=True, slots=True)
class SeenHead:
    """What a look needs of the seen state without reading it: written beside every state
    (`of` the state file's stamp); the person's last look is written here alone."""

    of: FileStamp
    digest: str | None
    last_tx: int
    last_event: int
    looked_at: datetime
    looked_event: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "of": [self.of.inode, self.of.size, self.of.mtime_ns],
            "digest": self.digest,
            "last_tx": self.last_tx,
            "last_event": self.last_event,
            "looked_at": format_iso(self.looked_at),
            "looked_event": self.looked_event,
        }

    @classmethod
    def from_dict(cls, d: Any) -> SeenHead:
        try:
            inode, size, mtime = d["of"]
            looked = parse_iso_or_none(d["looked_at"])
            if looked is None:
                raise LedgerEntryError("a time is damaged")
            return cls(
                FileStamp(int(inode), int(size), int(mtime)),
                _opt_str(d.get("digest")),
                int(d["last_tx"]),
                int(d["last_event"]),
                looked,
                int(d["looked_event"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise LedgerEntryError(f"is damaged ({e})") from None


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def content_digest(store: MemoryStore) -> str | None:
    """A hash of everything the store holds, where it has one (a store file's sha256; not a
    folder's or a database's stamps): equal, nothing in the store changed."""
    return store.fingerprint if type(store) is Store else None


def entry_hash(memory: Memory, raw: dict[str, Any] | None) -> str:
    """Changes whenever the agent changes the entry (its record in the store's own format
    where the store keeps one, its keys' order included)."""
    if raw is None:
        return image_fingerprint(memory.to_dict())
    try:
        return hashlib.blake2b(orjson.dumps(raw, literal), digest_size=8).hexdigest()
    except orjson.JSONEncodeError:
        return image_fingerprint(raw)


def essence(image: Mapping[str, Any]) -> str:
    """The entry without what memtui moves on its own writes (version, derived links)."""
    kept = {k: v for k, v in image.items() if k not in _OWN_FIELDS}
    extra = kept.get("extra")
    if isinstance(extra, dict):
        kept["extra"] = {k: v for k, v in extra.items() if k != "content_hash"}
    return image_fingerprint(kept)


def raw_records(store: MemoryStore) -> Mapping[str, dict[str, Any]]:
    """Each entry's record in the store's own format, where the store keeps one (files)."""
    document = getattr(store, "document", None)
    return document().raws if callable(document) else {}


def state_of(
    store: MemoryStore, previous: Mapping[str, SeenEntry] | None = None
) -> dict[str, SeenEntry]:
    """The store's entries as memtui sees them now (an entry unchanged since `previous` keeps
    its image from there)."""
    raws = raw_records(store)
    previous = previous or {}
    out = {}
    for position, memory in enumerate(store.memories()):
        raw = raws.get(memory.id)
        h = entry_hash(memory, raw)
        was = previous.get(memory.id)
        if was is not None and was.hash == h:
            out[memory.id] = (
                was if was.position == position else SeenEntry(h, was.image, was.raw, position)
            )
        else:
            out[memory.id] = SeenEntry(h, memory.to_dict(), raw, position)
    return out


def _newest_tx(store: MemoryStore) -> int:
    return max((t.id for t in store.transactions()), default=0)


@dataclass(frozen=True, slots=True)
class OutsideChange:
    """One entry as the agent left it: `before`/`after` images (None: absent)."""

    id: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    before_raw: dict[str, Any] | None
    position: int | None
    at: datetime
    event: int

    @property
    def kind(self) -> str:
        if self.before is None:
            return "added"
        return "removed" if self.after is None else "changed"

    def before_memory(self) -> Memory | None:
        return Memory.from_dict(self.before) if self.before is not None else None

    def after_memory(self) -> Memory | None:
        return Memory.from_dict(self.after) if self.after is not None else None


def counts(changes: Iterable[OutsideChange]) -> dict[str, int]:
    out = {"added": 0, "changed": 0, "removed": 0}
    for c in changes:
        out[c.kind] += 1
    return out


def summary(changes: Iterable[OutsideChange]) -> str:
    """ "the agent added 5, changed 2, removed 23"."""
    n = counts(changes)
    return f"the agent added {n['added']}, changed {n['changed']}, removed {n['removed']}"


class OutsideRecord:
    """The last seen state and the outside events of one store, in `folder`."""

    def __init__(self, folder: Path, owner: str) -> None:
        self.folder = folder
        self.owner = owner
        self.seen_path = folder / SEEN
        self.head_path = folder / HEAD
        self.events_path = folder / EVENTS
        # the state as last read or written, while its file is unchanged (a watcher's loop)
        self._seen: tuple[FileStamp | None, SeenState] | None = None
        self._last_event: tuple[FileStamp | None, int] | None = None

    # -- the last seen state --------------------------------------------------------------

    def seen(self) -> SeenState | None:
        state = self._read_seen()
        head = self.head()
        if state is not None and head is not None:
            state.looked_at, state.looked_event = head.looked_at, head.looked_event
        return state

    def _read_seen(self) -> SeenState | None:
        stamp = FileStamp.of(self.seen_path)
        if stamp is not None and self._seen is not None and self._seen[0] == stamp:
            return copy.copy(self._seen[1])
        try:
            data = self.seen_path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as e:
            raise MemtuiError(f"{self.seen_path}: cannot read ({e.strerror})") from None
        try:
            state = SeenState.from_dict(loads(gzip.decompress(data)))
            self._seen = (stamp, copy.copy(state))
            return state
        except (OSError, EOFError, orjson.JSONDecodeError, LedgerEntryError):
            # a damaged state is seen again from the store (nothing in it is the only copy:
            # every outside change is in the event log)
            return None

    def head(self) -> SeenHead | None:
        """The seen state's head, while it is the head of the state file as it is (None: no
        head, a damaged one, or one of another state: the state itself is read)."""
        try:
            head = SeenHead.from_dict(orjson.loads(self.head_path.read_bytes()))
        except (OSError, orjson.JSONDecodeError, LedgerEntryError):
            return None
        return head if head.of == FileStamp.of(self.seen_path) else None

    def save(self, state: SeenState) -> None:
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        # written as it is made: a whole store's images are never one JSON text in memory
        try:
            atomic_write(self.seen_path, gzipped(state.parts(), 1), mode=0o600)
        except NotOrjson:  # a value only the standard library writes: written whole
            data = gzip.compress(dumps(state.to_dict()), compresslevel=1, mtime=0)
            atomic_write(self.seen_path, data, mode=0o600)
        stamp = FileStamp.of(self.seen_path)
        self._seen = (stamp, copy.copy(state))
        if stamp is not None:
            self._save_head(
                SeenHead(
                    stamp,
                    state.digest,
                    state.last_tx,
                    state.last_event,
                    state.looked_at,
                    state.looked_event,
                )
            )

    def _save_head(self, head: SeenHead) -> None:
        atomic_write(self.head_path, dumps(head.to_dict()), mode=0o600)

    def looked(self) -> tuple[datetime, int, int] | None:
        """When the person last looked, the last event then, and the last event now (None:
        memtui never saw the store), from the head where it can."""
        head = self.head()
        if head is not None:
            return head.looked_at, head.looked_event, head.last_event
        seen = self._read_seen()
        return None if seen is None else (seen.looked_at, seen.looked_event, seen.last_event)

    # -- outside events -------------------------------------------------------------------

    def events(self, *, archived: bool = False) -> list[Transaction]:
        """Outside events, oldest first (with the archived ones too when `archived`)."""
        blobs: list[bytes] = []
        if archived:
            blobs += [gzip.decompress(p.read_bytes()) for p in self._archives()]
        with contextlib.suppress(FileNotFoundError):
            blobs.append(self.events_path.read_bytes())
        out = []
        for blob in blobs:
            for line in blob.split(b"\n"):
                if not line.strip():
                    continue
                try:
                    entry = _loads(line)
                    out.append(Transaction.from_dict(entry["tx"]))
                except (orjson.JSONDecodeError, LedgerEntryError, KeyError, TypeError):
                    continue  # a torn last line (a watcher killed mid-append)
        return out

    def last_event(self) -> int:
        stamp = FileStamp.of(self.events_path)
        if stamp is not None and self._last_event is not None and self._last_event[0] == stamp:
            return self._last_event[1]
        events = self.events()
        if events:
            last = events[-1].id
        else:
            archives = self._archives()
            last = self._archived_through(archives[-1]) if archives else 0
        self._last_event = (stamp, last)
        return last

    def append(self, event: Transaction) -> None:
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        SidecarLedger(self.events_path, None).append({"tx": event.to_dict(), "store": self.owner})
        self.compact()
        self._last_event = (FileStamp.of(self.events_path), event.id)

    def _archives(self) -> list[Path]:
        found = []
        for p in self.folder.glob(ARCHIVE.format("*")):
            number = p.name.removeprefix("outside-archive-").removesuffix(".jsonl.gz")
            if number.isdigit():
                found.append((int(number), p))
        return [p for _, p in sorted(found)]

    def _archived_through(self, archive: Path) -> int:
        lines = gzip.decompress(archive.read_bytes()).strip().split(b"\n")
        return int(_loads(lines[-1])["tx"]["id"]) if lines and lines[-1] else 0

    def compact(self, max_bytes: int = MAX_LOG_BYTES, keep: int = KEEP_ARCHIVES) -> None:
        """Past `max_bytes`, move the event log into a new compressed archive (written and
        synced before the log is emptied); keep the newest `keep` archives."""
        try:
            size = self.events_path.stat().st_size
        except FileNotFoundError:
            return
        if size <= max_bytes:
            return
        data = self.events_path.read_bytes()
        archives = self._archives()
        number = 1 + (int(archives[-1].name.split("-")[-1].split(".")[0]) if archives else 0)
        atomic_write(self.folder / ARCHIVE.format(number), gzip.compress(data, mtime=0), mode=0o600)
        os.truncate(self.events_path, 0)
        for old in self._archives()[:-keep]:
            old.unlink()

    def disk_bytes(self) -> int:
        paths = [self.seen_path, self.events_path, *self._archives()]
        return sum(p.stat().st_size for p in paths if p.exists())

    # -- finding and folding changes ------------------------------------------------------

    def catch_up(self, store: MemoryStore, now: datetime) -> Transaction | None:
        """Record what changed in `store` since the state memtui last saw, apart from memtui's
        own transactions, as one outside event; the store as it is becomes the state seen.
        The first time, the store as it is is the state seen (nothing to compare with). A
        store read before another writer changed it says nothing new (None)."""
        if store.changed_on_disk():
            return None
        digest = content_digest(store)
        head = self.head() if digest is not None else None
        if head is not None and head.digest == digest and head.last_tx == _newest_tx(store):
            return None  # the very store the state was taken from
        seen = self.seen()
        newest = _newest_tx(store)
        if seen is None:
            last = self.last_event()
            self.save(SeenState(now, newest, last, state_of(store), now, last, digest))
            return None
        expected = self._expected(store, seen)
        # an entry as memtui's own transactions left it keeps the image made for `expected`
        current = state_of(store, expected)
        changes = []
        for ident in dict.fromkeys([*expected, *current]):
            then, later = expected.get(ident), current.get(ident)
            if then is not None and later is not None and then.hash == later.hash:
                continue
            if then is None and later is None:
                continue
            changes.append(
                ChangeImage(
                    ident,
                    then.image if then else None,
                    later.image if later else None,
                    then.raw if then else None,
                    later.raw if later else None,
                    then.position if then else (later.position if later else None),
                )
            )
        event = None
        last = seen.last_event
        if changes:
            last = max(self.last_event(), seen.last_event) + 1
            memo = [OutsideChange(c.id, c.before, c.after, None, None, now, 0) for c in changes]
            event = Transaction(
                last, now, AGENT, OUTSIDE, summary(memo), changes, details={"outside": True}
            )
            self.append(event)
        if (
            event is not None
            or newest != seen.last_tx
            or current != seen.entries
            or digest != seen.digest
        ):
            state = SeenState(now, newest, last, current, seen.looked_at, seen.looked_event, digest)
            self.save(state)
        return event

    def _expected(self, store: MemoryStore, seen: SeenState) -> dict[str, SeenEntry]:
        """The seen state with memtui's own later transactions applied: an entry they touched
        is expected as their last after image left it (what memtui moves itself aside)."""
        expected = dict(seen.entries)
        later = [t for t in store.transactions() if t.id > seen.last_tx]
        if not later:
            return expected
        current = {m.id: m for m in store.memories()}
        raws = raw_records(store)
        for tx in later:
            for c in tx.changes:
                now_m = current.get(c.id)
                left = None if c.lost else c.after_memory()
                if left is None:
                    if c.lost and now_m is not None:  # unknown: taken as it is
                        raw = raws.get(c.id)
                        expected[c.id] = SeenEntry(entry_hash(now_m, raw), now_m.to_dict(), raw, 0)
                    else:
                        expected.pop(c.id, None)
                    continue
                after = store.visible(left)
                if after is None:
                    expected.pop(c.id, None)
                    continue
                position = expected[c.id].position if c.id in expected else len(expected)
                now_image = now_m.to_dict() if now_m is not None else None
                # the entry as memtui left it (most often the very record): no essence to compare
                if now_image is not None and (
                    now_m == after or essence(now_image) == essence(after.to_dict())
                ):
                    assert now_m is not None
                    raw = raws.get(c.id)
                    expected[c.id] = SeenEntry(entry_hash(now_m, raw), now_image, raw, position)
                else:
                    image = after.to_dict()
                    expected[c.id] = SeenEntry(
                        image_fingerprint(image), image, c.after_raw, position
                    )
        return expected

    def mark_looked(self, now: datetime) -> None:
        head = self.head()
        if head is not None:
            self._save_head(dataclasses.replace(head, looked_at=now, looked_event=head.last_event))
            return
        seen = self.seen()
        if seen is not None:
            seen.looked_at, seen.looked_event = now, seen.last_event
            self.save(seen)


def net_changes(events: Iterable[Transaction]) -> list[OutsideChange]:
    """Each entry's first before and last after over `events` (oldest first); entries that
    ended as they began are left out."""
    first: dict[str, tuple[ChangeImage, Transaction]] = {}
    last: dict[str, tuple[ChangeImage, Transaction]] = {}
    for event in events:
        for c in event.changes:
            first.setdefault(c.id, (c, event))
            last[c.id] = (c, event)
    out = []
    for ident, (c, _event) in first.items():
        end, end_event = last[ident]
        if c.before is None and end.after is None:
            continue
        if (
            c.before is not None
            and end.after is not None
            and image_fingerprint(c.before_raw or c.before)
            == image_fingerprint(end.after_raw or end.after)
        ):
            continue
        out.append(
            OutsideChange(
                ident, c.before, end.after, c.before_raw, c.position, end_event.at, end_event.id
            )
        )
    return out
