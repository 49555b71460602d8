"""The audit ledger: one `Transaction` per commit, with the before and after image of every
memory it touched, and the append-only JSON Lines file that holds it beside non-native stores.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, overload

import orjson

from memtui.errors import MemtuiError, NotFoundError, StoreFormatError
from memtui.jsonout import (
    NotOrjson,
    deep_values,
    dumps,
    dumps_around,
    dumps_in_parts,
    literal,
    loads,
    rows_text,
    strict_dumps,
)
from memtui.model import Memory
from memtui.stores.file.files import atomic_write, write_failure, writing
from memtui.times import format_iso, parse_iso_or_none


class Actor:
    USER = "user"
    PLAN = "plan"
    LLM = "llm"


Image = dict[str, Any] | Memory | None
"""An entry's image as a `ChangeImage` is given it: the canonical dict, or the entry itself
(its dict made when asked for, so that a transaction of a million changes holds no million
dicts; see `ChangeImage.before`)."""


class _Patched:
    """The image `base` with the fields a compact journal change recorded put back (the
    before image of a change whose after image is `base`), made when asked for."""

    __slots__ = ("base", "diff")

    def __init__(self, base: dict[str, Any] | Memory, diff: dict[str, list[Any]]) -> None:
        self.base, self.diff = base, diff

    def image(self) -> dict[str, Any]:
        base = self.base if isinstance(self.base, dict) else self.base.to_dict()
        return {**base, **{k: v[0] for k, v in self.diff.items()}}


def _image(held: dict[str, Any] | Memory | _Patched | None) -> dict[str, Any] | None:
    if held is None or isinstance(held, dict):
        return held
    if isinstance(held, Memory):
        return held.to_dict()
    return held.image()


_REMADE: dict[str, list[Any]] = {}
"""A `ChangeImage`'s diff let go of: made again from its images when asked for."""


class ChangeImage:
    """One memory before and after a transaction (`None`: absent). The `raw` images are the
    record in the store's own format (pi, longterm), so undo restores it byte for byte.

    `before` and `after` are the canonical dicts (`Memory.to_dict`); one given as a `Memory`
    is held as that entry and its dict made on each read of the attribute."""

    __slots__ = (
        "_after",
        "_before",
        "_diff",
        "_lost",
        "_resolve",
        "after_fp",
        "after_raw",
        "before_raw",
        "compact",
        "id",
        "made",
        "position",
    )

    def __init__(
        self,
        id: str,
        before: Image,
        after: Image,
        before_raw: dict[str, Any] | None = None,
        after_raw: dict[str, Any] | None = None,
        # where the entry stood in the file, so that undoing its removal puts it back there
        position: int | None = None,
        *,
        # written as its changed fields only (a native journal; see `resolve_images`)
        compact: bool = False,
        diff: dict[str, list[Any]] | None = None,
        after_fp: str | None = None,
        # a compact change whose images the journal cannot rebuild (the entry was changed
        # outside memtui since): shown without images, never undone
        lost: bool = False,
        # `diff` and `after_fp` were made from these very images (by the commit that wrote
        # them), so they need not be made again to write the change
        made: bool = False,
    ) -> None:
        self.id = id
        self._before: dict[str, Any] | Memory | _Patched | None = before
        self._after: dict[str, Any] | Memory | _Patched | None = after
        self.before_raw = before_raw
        self.after_raw = after_raw
        self.position = position
        self.compact = compact
        self._diff = diff
        self.after_fp = after_fp
        self._lost = lost
        self.made = made
        self._resolve: Callable[[], None] | None = None
        """Set on a compact change read from a journal until its images are rebuilt
        (`resolve_later`): done on first use of its images, for the whole journal."""

    def _ready(self) -> None:
        if self._resolve is not None:
            self._resolve()

    @property
    def diff(self) -> dict[str, list[Any]] | None:
        """The changed fields, {field: [before, after]}, of a compact change (else None)."""
        if self._diff is _REMADE:  # let go of once written: made again from the images
            before, after = self.before, self.after
            assert before is not None and after is not None
            return image_diff(before, after)
        return self._diff

    @diff.setter
    def diff(self, diff: dict[str, list[Any]] | None) -> None:
        self._diff = diff

    def let_diff_go(self) -> None:
        """Hold no diff made from the images this change holds (`made`): it is made again
        from them when asked for (a whole-store commit's diffs weigh 500 B a change)."""
        if self.made and self._diff is not None and self._before is not None:
            self._diff = _REMADE

    @property
    def lost(self) -> bool:
        self._ready()
        return self._lost

    @lost.setter
    def lost(self, lost: bool) -> None:
        self._ready()
        self._lost = lost

    @property
    def before(self) -> dict[str, Any] | None:
        self._ready()
        return _image(self._before)

    @before.setter
    def before(self, image: dict[str, Any] | None) -> None:
        self._ready()
        self._before = image

    @property
    def after(self) -> dict[str, Any] | None:
        self._ready()
        return _image(self._after)

    @after.setter
    def after(self, image: dict[str, Any] | None) -> None:
        self._ready()
        self._after = image

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ChangeImage):
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]

    def _fields(self) -> tuple[Any, ...]:
        return (
            self.id,
            self.before,
            self.after,
            self.before_raw,
            self.after_raw,
            self.position,
            self.compact,
            self.diff,
            self.after_fp,
            self.lost,
        )

    def __repr__(self) -> str:
        return f"ChangeImage(id={self.id!r}, compact={self.compact}, lost={self.lost})"

    def before_memory(self) -> Memory | None:
        self._ready()
        if isinstance(self._before, Memory):
            return self._before
        return _memory(self.before, self.id)

    def after_memory(self) -> Memory | None:
        self._ready()
        if isinstance(self._after, Memory):
            return self._after
        return _memory(self.after, self.id)

    def to_dict(self) -> dict[str, Any]:
        self._ready()
        if self.compact and (self.lost or (self._before is not None and self._after is not None)):
            diff = self.diff
            fp = self.after_fp
            if (diff is None or not self.lost) and not (self.made and fp is not None):
                before, after = self.before, self.after
                assert before is not None and after is not None
                diff = image_diff(before, after)
                fp = self.after_fp if self.lost else image_fingerprint(after)
            out: dict[str, Any] = {"id": self.id, "diff": diff, "after_fp": fp}
            if self.position is not None:
                out["position"] = self.position
            return out
        out = {"id": self.id, "before": self.before, "after": self.after}
        if self.before_raw is not None:
            out["before_raw"] = self.before_raw
        if self.after_raw is not None:
            out["after_raw"] = self.after_raw
        if self.position is not None:
            out["position"] = self.position
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ChangeImage:
        diff = d.get("diff")
        return cls(
            d["id"],
            d.get("before"),
            d.get("after"),
            d.get("before_raw"),
            d.get("after_raw"),
            d.get("position"),
            compact=diff is not None,
            diff=diff,
            after_fp=d.get("after_fp"),
        )


def image_diff(before: dict[str, Any], after: dict[str, Any]) -> dict[str, list[Any]]:
    """The fields that differ between two images of one entry: {field: [before, after]}."""
    return {k: [before.get(k), v] for k, v in after.items() if before.get(k) != v}


def image_fingerprint(image: dict[str, Any]) -> str:
    try:
        data = orjson.dumps(image, literal, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:  # integers past 64 bits, very deep values
        with deep_values():
            text = json.dumps(image, sort_keys=True, ensure_ascii=False, default=str)
        data = text.encode("utf-8", "surrogatepass")  # a lone surrogate (pi's cut emoji) too
    return hashlib.blake2b(data, digest_size=8).hexdigest()


_LOST: dict[str, Any] = {}


def resolve_later(txs: list[Transaction], current: Mapping[str, Memory]) -> None:
    """`resolve_images`, done when a compact change's images (or whether they are lost) are
    first asked for, and only down to its transaction: reading the ledger to count or list
    transactions (stats, the history, a commit's next id) costs no images (after a 200k-entry
    apply: 7 of 11 s), and an older transaction whose changes are kept as JSON
    (`JournalChanges`) is not read for the images of a newer one."""
    lock = threading.RLock()  # the TUI's workers share one ledger read
    state: dict[str, Image | _Patched] = {}
    oldest = len(txs)  # the transactions from here on are resolved
    running = False

    def resolve_to(index: int) -> None:
        nonlocal oldest, running
        with lock:
            if index >= oldest or running:
                return  # resolved meanwhile (or reading the changes this resolve asked for)
            running = True
            trial = dict(state)  # an interrupted making is made again from where it began
            try:
                resolve_images(txs[index:oldest], current, trial)  # (sets the slots itself)
            finally:
                running = False
            for tx in txs[index:oldest]:  # only once every image is made
                for change in tx.changes:
                    change._resolve = None
            state.clear()
            state.update(trial)
            oldest = index

    for index, tx in enumerate(txs):
        resolve = functools.partial(resolve_to, index)

        def attach(changes: Sequence[ChangeImage], resolve: Callable[[], None] = resolve) -> None:
            for change in changes:
                if change.diff is not None:
                    change._resolve = resolve

        if isinstance(tx.changes, JournalChanges):
            tx.changes.when_read(attach, lock)
        else:
            attach(tx.changes)


def _changes_of(entry: EncodedEntry) -> Iterator[Any]:
    """An entry's changes as JSON values, read a part at a time where its parts hold them
    (`dumps_around`: the entry's head and its list's opening, the changes' parts, the list's
    end and the rest), so that a whole-store transaction's dicts are never made at once."""
    parts = entry.parts
    if len(parts) < 2 or not (parts[0].endswith(b'"changes":[') and parts[-1].startswith(b"]")):
        yield from entry.value()["changes"]
        return
    for part in parts[1:-1]:
        yield from loads(b"".join((b"[", memoryview(part)[part.startswith(b",") :], b"]")))


class JournalChanges(Sequence["ChangeImage"]):
    """A journal transaction's changes, kept as the entry's JSON until first asked for:
    counting and listing transactions needs none of them, and a whole-store transaction's
    changes take about seven times their bytes as objects."""

    __slots__ = ("_attach", "_count", "_entry", "_items", "_lock")

    def __init__(self, entry: EncodedEntry, count: int) -> None:
        self._entry: EncodedEntry | None = entry
        self._count = count
        self._items: list[ChangeImage] | None = None
        self._attach: Callable[[Sequence[ChangeImage]], None] | None = None
        self._lock: threading.RLock | None = None

    def when_read(
        self, attach: Callable[[Sequence[ChangeImage]], None], lock: threading.RLock
    ) -> None:
        self._attach, self._lock = attach, lock

    def _read(self) -> list[ChangeImage]:
        items = self._items
        if items is not None:
            return items
        with self._lock or contextlib.nullcontext():
            if self._items is None:
                assert self._entry is not None
                items = [ChangeImage.from_dict(c) for c in _changes_of(self._entry)]
                if self._attach is not None:
                    self._attach(items)
                self._items, self._entry = items, None
            return self._items

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> ChangeImage: ...

    @overload
    def __getitem__(self, index: slice) -> list[ChangeImage]: ...

    def __getitem__(self, index: int | slice) -> ChangeImage | list[ChangeImage]:
        return self._read()[index]

    def __iter__(self) -> Iterator[ChangeImage]:
        return iter(self._read())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"JournalChanges({self._count} changes)"


def resolve_images(
    txs: list[Transaction],
    current: Mapping[str, Memory],
    state: dict[str, Image | _Patched] | None = None,
) -> None:
    """Rebuild the images of compact changes, newest transaction first: an entry's after
    image is the entry as the store holds it (or as the next transaction found it), checked
    against its fingerprint; its before image is that with the changed fields put back.
    Each image is held once: the newest as the store's entry itself, a before image as its
    after image and the changed fields (made when asked for), an older after image as the
    dict that the next transaction's before image gives. `state`: where the transactions
    after these left each entry (updated)."""
    state = {} if state is None else state
    for tx in reversed(txs):
        for change in tx.changes:
            if change.diff is None:
                state[change.id] = change._before
                continue
            held = state[change.id] if change.id in state else current.get(change.id)
            after = None if held is _LOST else _image(held)
            if (
                after is None
                or not set(change.diff) <= after.keys()
                or image_fingerprint(after) != change.after_fp
            ):
                change._lost = True
                state[change.id] = _LOST
                continue
            base = held if isinstance(held, Memory) else after
            change._before, change._after = _Patched(base, change.diff), base
            state[change.id] = change._before


@dataclass(slots=True)
class Transaction:
    id: int
    at: datetime
    actor: str
    kind: str
    reason: str
    changes: Sequence[ChangeImage]
    undoes: int | None = None
    backup: str | None = None
    # "pending" until the store file is written (sidecar ledgers), then "committed" or "aborted".
    state: str = "committed"
    sha_after: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    # pi's top-level keys (updatedAt, quotas, …) before and after, so undo restores the file
    header_before: dict[str, Any] | None = None
    header_after: dict[str, Any] | None = None

    @property
    def memory_ids(self) -> list[str]:
        return [c.id for c in self.changes]

    def to_dict(self, *, changes: bool = True) -> dict[str, Any]:
        """As the ledger holds it (`changes=False`: with an empty list of changes)."""
        out: dict[str, Any] = {
            "id": self.id,
            "at": format_iso(self.at),
            "actor": self.actor,
            "kind": self.kind,
            "reason": self.reason,
            "changes": [c.to_dict() for c in self.changes] if changes else [],
            "undoes": self.undoes,
            "backup": self.backup,
        }
        if self.sha_after is not None:
            out["sha_after"] = self.sha_after
        if self.details:
            out["details"] = self.details
        if self.header_before is not None:
            out["header_before"] = self.header_before
            out["header_after"] = self.header_after
        return out

    @staticmethod
    def check(d: Any) -> tuple[int, datetime, list[Any]]:
        """The id, time and changes of a transaction as the ledger holds it, checked;
        LedgerEntryError says what is wrong."""
        if not isinstance(d, dict):
            raise LedgerEntryError("is not an object")
        ident = _field(d, "id", int)
        if ident < 0:
            raise LedgerEntryError(f"has a negative id {ident}")
        at_text = _field(d, "at", str)
        at = parse_iso_or_none(at_text)
        if at is None:
            raise LedgerEntryError(f"transaction {ident}: 'at' is not a time: {at_text[:40]!r}")
        changes = _field(d, "changes", list, optional=True) or []
        for change in changes:
            if not (_plainly_sound(change) or _sound(change)):
                raise LedgerEntryError(f"transaction {ident}: a change is damaged")
        return ident, at, changes

    @classmethod
    def from_dict(cls, d: Any, state: str = "committed") -> Transaction:
        """A transaction as the ledger holds it; LedgerEntryError says what is wrong."""
        ident, at, changes = cls.check(d)
        return cls(
            id=ident,
            at=at,
            actor=_field(d, "actor", str),
            kind=_field(d, "kind", str),
            reason=_field(d, "reason", str, optional=True) or "",
            changes=[ChangeImage.from_dict(c) for c in changes],
            undoes=_field(d, "undoes", int, optional=True),
            backup=_field(d, "backup", str, optional=True),
            state=state,
            sha_after=_field(d, "sha_after", str, optional=True),
            details=_field(d, "details", dict, optional=True) or {},
            header_before=_field(d, "header_before", dict, optional=True),
            header_after=_field(d, "header_after", dict, optional=True),
        )


_OPT_INT = (int, type(None))


def _plainly_sound(change: Any) -> bool:
    """`_sound` for a change as JSON gives it (exact types), without a call per field."""
    if type(change) is not dict:
        return False
    get = change.get
    before, after, before_raw, after_raw = (
        get("before"),
        get("after"),
        get("before_raw"),
        get("after_raw"),
    )
    diff = get("diff")
    if not (
        type(get("id")) is str
        and type(get("position")) in _OPT_INT
        and (before is None or type(before) is dict)
        and (after is None or type(after) is dict)
        and (before_raw is None or type(before_raw) is dict)
        and (after_raw is None or type(after_raw) is dict)
    ):
        return False
    if diff is None:
        return True
    if type(diff) is not dict or type(get("after_fp")) is not str:
        return False
    return all(type(pair) is list and len(pair) == 2 for pair in diff.values())


def _sound(change: Any) -> bool:
    """Whether a journal change holds what a change needs, of the types it needs."""
    return (
        isinstance(change, dict)
        and isinstance(change.get("id"), str)
        and all(
            isinstance(change.get(k), dict | None)
            for k in ("before", "after", "before_raw", "after_raw", "diff")
        )
        and type(change.get("position")) in (int, type(None))
        and (
            change.get("diff") is None
            or (
                isinstance(change.get("after_fp"), str)
                and all(isinstance(v, list) and len(v) == 2 for v in change["diff"].values())
            )
        )
    )


class LedgerEntryError(ValueError):
    """A ledger entry memtui cannot read; the message says what is wrong with it."""


def _field(d: dict[str, Any], key: str, kind: type, *, optional: bool = False) -> Any:
    value = d.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, kind) or isinstance(value, bool):
        where = f"transaction {d['id']}" if type(d.get("id")) is int else "an entry"
        problem = "has no" if key not in d else "has a damaged"
        raise LedgerEntryError(f"{where} {problem} {key!r}")
    return value


def _memory(image: dict[str, Any] | None, ident: str) -> Memory | None:
    if image is None:
        return None
    try:
        return Memory.from_dict(image)
    except (KeyError, TypeError, ValueError, AttributeError):
        raise StoreFormatError(
            f"the ledger's image of {ident!r} is damaged; `memtui doctor` says more"
        ) from None


@dataclass(frozen=True, slots=True)
class EncodedEntry:
    """A journal entry as its compact JSON, in pieces: how a native store holds the entry of
    a transaction it has just committed, or of a big one read from the file (a whole-store
    transaction's dicts take several times its bytes, and only some reads need them)."""

    parts: tuple[bytes, ...]
    # the entry without its changes, and how many it has, where they were checked already
    head: dict[str, Any] | None = None
    count: int = 0
    # written by orjson (else by the standard library: a file holding it is written whole)
    plain: bool = True

    def value(self) -> Any:
        return loads(b"".join(self.parts))  # (a lone surrogate's escape: not orjson's)

    @property
    def size(self) -> int:
        return sum(len(part) for part in self.parts)


_CHANGES_A_PART = 5000
_ENTRY_DEPTH = 2  # a native journal entry lies in the file's object and the journal table


_KEPT_AS_JSON = 512  # changes: a journal entry with more is held as its JSON


def encoded_entry(tx: Transaction, written: ChangesWritten | None = None) -> EncodedEntry:
    """`dumps(tx.to_dict())`, its changes' dicts made a part at a time (`written`: the
    changes' parts written already, as they were made)."""
    head = tx.to_dict(changes=False)
    try:
        if written is not None and (texts := written.texts()) is not None:
            parts = tuple(dumps_around(head, "changes", texts, depth=_ENTRY_DEPTH))
        else:
            parts = tuple(entry_parts(head, (c.to_dict() for c in tx.changes)))
    except NotOrjson:
        return EncodedEntry((dumps(tx.to_dict()),), head, len(tx.changes), plain=False)
    return EncodedEntry(parts, head, len(tx.changes))


class ChangesWritten:
    """A journal entry's changes written as the commit makes them, `_CHANGES_A_PART` at a
    time, each part's diffs let go of once written (`ChangeImage.let_diff_go`): a whole-store
    transaction never holds every change's diff and JSON at once."""

    def __init__(self) -> None:
        self._texts: list[bytes] | None = []
        self._waiting: list[ChangeImage] = []

    def add(self, change: ChangeImage) -> None:
        self._waiting.append(change)
        if len(self._waiting) >= _CHANGES_A_PART:
            self._write()

    def texts(self) -> list[bytes] | None:
        """The parts, or None where orjson could not write one (then the entry is written
        from its changes)."""
        if self._waiting:
            self._write()
        return self._texts

    def _write(self) -> None:
        waiting, self._waiting = self._waiting, []
        if self._texts is None:
            return
        try:
            self._texts.append(rows_text([c.to_dict() for c in waiting], _ENTRY_DEPTH + 1))
        except NotOrjson:
            self._texts = None
            return
        for change in waiting:
            change.let_diff_go()


def kept_entry(entry: Any) -> Any:
    """A journal entry as read from the file, as the store holds it: a big one whose
    changes are sound as its JSON (`EncodedEntry`), any other as it is."""
    if not isinstance(entry, dict):
        return entry
    changes = entry.get("changes")
    if not isinstance(changes, list) or len(changes) < _KEPT_AS_JSON:
        return entry
    try:
        Transaction.check(entry)
    except LedgerEntryError:
        return entry  # read as it is, where the ledger says what is wrong with it
    try:
        parts = tuple(entry_parts(entry))
    except NotOrjson:
        return entry
    return EncodedEntry(parts, {**entry, "changes": []}, len(changes))


def entry_parts(entry: Any, changes: Iterable[Any] | None = None) -> Iterator[bytes]:
    """`dumps(entry)` a part at a time, as orjson writes it (else NotOrjson): a journal
    entry's changes (`changes`, else its own) `_CHANGES_A_PART` at a time; an entry memtui
    cannot read is written back as it is."""
    if isinstance(entry, EncodedEntry):
        if not entry.plain:
            raise NotOrjson
        yield from entry.parts
        return
    if not isinstance(entry, dict) or not isinstance(entry.get("changes"), list):
        yield strict_dumps(entry, _ENTRY_DEPTH)
        return
    rows = entry["changes"] if changes is None else changes
    yield from dumps_in_parts(entry, "changes", rows, size=_CHANGES_A_PART, depth=_ENTRY_DEPTH)


def journal_value(entry: Any) -> Any:
    """A journal entry's JSON value (an `EncodedEntry` read back)."""
    return entry.value() if isinstance(entry, EncodedEntry) else entry


def read_journal(
    entries: list[Any], current: Mapping[str, Memory] | None = None
) -> tuple[list[Transaction], list[str]]:
    """The transactions of a native store's journal (compact changes rebuilt against the
    store's `current` entries), and one line per damaged entry."""
    txs, problems = [], []
    for number, entry in enumerate(entries, start=1):
        try:
            if isinstance(entry, EncodedEntry) and entry.head is not None:
                tx = Transaction.from_dict(entry.head)
                tx.changes = JournalChanges(entry, entry.count)
            else:
                tx = Transaction.from_dict(journal_value(entry))
            txs.append(tx)
        except LedgerEntryError as e:
            problems.append(f"journal entry {number} is damaged ({e})")
    resolve_later(txs, current or {})
    return txs, problems


def undo_target(transactions: list[Transaction], tx_id: int | None, where: object) -> Transaction:
    """The transaction an undo reverts: `tx_id`, or the newest one not undone (and not itself
    an undo); a one-line error when there is none, it is undone already, or it changed nothing."""
    undone = undone_ids(transactions)
    if tx_id is None:
        candidates = [
            t for t in transactions if t.id not in undone and t.undoes is None and t.changes
        ]
        if not candidates:
            raise NotFoundError(f"{where}: nothing to undo")
        return candidates[-1]
    target = next((t for t in transactions if t.id == tx_id), None)
    if target is None:
        raise NotFoundError(f"{where}: no transaction {tx_id} in the ledger")
    if target.id in undone:
        raise MemtuiError(
            f"transaction {target.id} is already undone (by transaction {undone[target.id]})"
        )
    if not target.changes:
        raise MemtuiError(f"transaction {target.id} ({target.kind}) changed no entries")
    return target


def undone_ids(transactions: list[Transaction]) -> dict[int, int]:
    """Which transactions are undone, and by which undo (an undone undo re-does its target)."""
    undoers: dict[int, list[int]] = {}
    for tx in transactions:
        if tx.undoes is not None:
            # an undo of several transactions together (`undo --with-later`) undoes each
            together = tx.details.get("undoes_together")
            targets = together if isinstance(together, list) else [tx.undoes]
            for target in targets:
                if isinstance(target, int):
                    undoers.setdefault(target, []).append(tx.id)
    undone: dict[int, int] = {}
    # newest first, so an undo's own state is known before its target's
    for tx in reversed(transactions):
        active = [u for u in undoers.get(tx.id, []) if u not in undone]
        if active:
            undone[tx.id] = active[-1]
    return undone


def _loads(line: bytes) -> Any:
    """A ledger line; a pi record may hold a lone UTF-16 surrogate (pi cuts text at 500
    units), which the standard library reads and orjson refuses."""
    return loads(line)


def _entries(
    data: bytes, problems: list[str], path: Path
) -> Iterator[tuple[int, dict[str, Any], Transaction | None]]:
    """The readable lines of a sidecar ledger (line number, entry, its transaction); a damaged
    line is named in `problems`, except a torn last line (a writer that died mid-append)."""
    for number, _, _, entry, tx in _entries_at(data, problems, path):
        yield number, entry, tx


def _entries_at(
    data: bytes, problems: list[str], path: Path
) -> Iterator[tuple[int, int, int, dict[str, Any], Transaction | None]]:
    """`_entries`, each with the byte offset where its line starts and the line's length
    (its newline included)."""
    lines = data.split(b"\n")
    offset = 0
    for number, line in enumerate(lines, start=1):
        start, offset = offset, offset + len(line) + 1
        if not line.strip():
            continue
        try:
            entry, tx = _loads(line), None
            if not isinstance(entry, dict):
                raise LedgerEntryError("is not an object")
            if "tx" in entry:
                tx = Transaction.from_dict(entry["tx"])
                if not isinstance(entry.get("store"), str | None):
                    raise LedgerEntryError("names its store wrongly")
            elif "tx_id" in entry:
                if (
                    entry.get("state") not in ("committed", "aborted")
                    or type(entry["tx_id"]) is not int
                ):
                    raise LedgerEntryError("has a damaged state mark")
            elif (
                not isinstance(entry.get("store"), str)
                or type(entry.get("lost_through", 0)) is not int
            ):
                raise LedgerEntryError("is not a ledger entry")
        except (orjson.JSONDecodeError, LedgerEntryError) as e:
            if number == len(lines):  # a torn last line: the writer died mid-append
                break
            why = "not JSON" if isinstance(e, orjson.JSONDecodeError) else str(e)
            problems.append(f"{path}: line {number} is damaged ({why})")
            continue
        yield number, start, len(line) + 1, entry, tx


@dataclass(slots=True)
class LedgerRead:
    transactions: list[Transaction]
    # one line per damaged line (or why the file cannot be read at all)
    problems: list[str]
    # the store the ledger says it belongs to (None: an older ledger that does not say)
    owner: str | None
    # transactions up to this id are known to be missing (`memtui doctor --fix` recorded it)
    lost_through: int = 0
    # the ledger's size, and each readable line: where it starts, its length, and the
    # transaction it is about (None: a line about the ledger itself)
    size: int = 0
    lines: list[tuple[int, int, int | None]] = field(default_factory=list)

    def bytes_of(self, ids: set[int]) -> int:
        """How many bytes of the ledger the lines about these transactions hold."""
        return sum(length for _, length, ident in self.lines if ident in ids)

    def tail_of(self, ids: set[int]) -> int | None:
        """Where the ledger's last lines begin when they are all about these transactions
        (cutting them off there leaves every other line), else None."""
        start = None
        for begin, _, ident in reversed(self.lines):
            if ident not in ids:
                break
            start = begin
        return start


class SidecarLedger:
    """`<store>.memtui/ledger.jsonl`: lines `{"tx": {...}, "store": path}` (written as pending
    before the store; `store` names the store the ledger belongs to) and
    `{"tx_id": N, "state": "committed" | "aborted"}` (written after); `{"store": path}` when a
    store moved with its sidecar adopts it (`memtui doctor --fix`), with `"lost_through": N`
    when doctor recorded that transactions up to N are missing from it. An aborted
    transaction's lines are cut off again where they are the ledger's last ones."""

    def __init__(self, path: Path, store: Path | None = None) -> None:
        self.path = path
        self.store = store

    def read(self) -> LedgerRead:
        """All transactions in order, pending ones included (their state says so); damaged
        lines are skipped and named in `problems`."""
        try:
            data = self.path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return LedgerRead([], [], None)
        except OSError as e:
            return LedgerRead([], [f"{self.path}: cannot read the ledger ({e.strerror})"], None)
        txs: dict[int, Transaction] = {}
        problems: list[str] = []
        owner, lost = None, 0
        lines: list[tuple[int, int, int | None]] = []
        for _, start, length, entry, tx in _entries_at(data, problems, self.path):
            lines.append((start, length, tx.id if tx is not None else entry.get("tx_id")))
            if tx is not None:
                tx.state = "pending"
                txs[tx.id] = tx
                owner = entry.get("store", owner)
            elif "tx_id" in entry:
                if entry["tx_id"] in txs:
                    txs[entry["tx_id"]].state = entry["state"]
            else:
                owner = entry["store"]
                lost = max(lost, entry.get("lost_through", 0))
        return LedgerRead(list(txs.values()), problems, owner, lost, len(data), lines)

    def append(self, entry: dict[str, Any]) -> int:
        """Append one line; returns the ledger's size before it (see `retract`). A line that
        cannot be written whole (a full disk) is cut off again before the error goes up."""
        line = dumps(entry) + b"\n"
        with writing(self.path, len(line)):
            return self._append(line)

    def _append(self, line: bytes) -> int:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            size = _cut_torn_line(fd)
            try:
                view = memoryview(line)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)
                raise
            return size
        finally:
            os.close(fd)

    def end(self) -> int:
        """Where the next line will start (a torn last line cut off first): what a commit
        keeps before it writes its intent, to `retract` to."""
        with writing(self.path):
            try:
                fd = os.open(self.path, os.O_RDWR)
            except FileNotFoundError:
                return 0
            try:
                return _cut_torn_line(fd)
            finally:
                os.close(fd)

    def retract(self, size: int) -> bool:
        """Cut the ledger back to `size` bytes (what `append` returned): the lines of a
        transaction that did not happen, appended last under the store's lock. Whether it
        was cut (a truncation needs no free space)."""
        try:
            with open(self.path, "r+b") as f:
                if os.fstat(f.fileno()).st_size < size:
                    return False
                f.truncate(size)
                os.fsync(f.fileno())
            if size == 0:  # the ledger this commit began: none is left
                os.unlink(self.path)
        except OSError:
            return False
        return True

    def repair(self, aside: Path) -> int:
        """Move the ledger to `aside` and keep only its readable lines (as they were) in its
        place; returns how many lines were left out."""
        data = self.path.read_bytes()
        problems: list[str] = []
        good = {number for number, _, _ in _entries(data, problems, self.path)}
        lines = data.split(b"\n")
        kept = b"".join(lines[n - 1] + b"\n" for n in sorted(good))
        os.replace(self.path, aside)
        atomic_write(self.path, kept, mode=0o600)
        return len(problems)

    def add_pending(self, tx: Transaction) -> int:
        """Write `tx` ahead as pending; returns the ledger's size before it. The line is
        written a few hundred changes at a time (the bytes `append` would write), so that a
        transaction of a million entries is never held whole as JSON."""
        entry: dict[str, Any] = {"tx": tx.to_dict(changes=False)}
        if self.store is not None:
            entry["store"] = str(self.store)
        try:
            return self._append_streamed(entry, tx.changes)
        except _NotStreamed:  # what orjson cannot write: the whole line as `dumps` writes it
            entry["tx"]["changes"] = [c.to_dict() for c in tx.changes]
            return self.append(entry)

    def _append_streamed(self, entry: dict[str, Any], changes: Sequence[ChangeImage]) -> int:
        try:
            shell = orjson.dumps(entry, literal)
        except orjson.JSONEncodeError:
            raise _NotStreamed from None
        # the first such key is the transaction's own: the keys before it hold no quote
        cut = shell.index(b'"changes":[]') + len(b'"changes":[')
        line = _Line(len(changes))
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        except OSError as e:
            raise write_failure(self.path, e) from None
        try:
            size = _cut_torn_line(fd)
            try:
                line.add(shell[:cut])
                for n, change in enumerate(changes):
                    try:
                        piece = orjson.dumps(change.to_dict(), literal)
                    except orjson.JSONEncodeError:
                        raise _NotStreamed from None
                    line.add(b"," + piece if n else piece)
                    line.done = n + 1
                    if line.held >= _CHUNK:
                        line.write(fd)
                line.add(shell[cut:] + b"\n")
                line.write(fd)
                os.fsync(fd)
            except BaseException as e:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)
                if isinstance(e, OSError):
                    raise write_failure(self.path, e, line.needs()) from None
                raise
            return size
        finally:
            os.close(fd)

    def mark(self, tx_id: int, state: str) -> None:
        with contextlib.suppress(OSError, MemtuiError):
            self.append({"tx_id": tx_id, "state": state})

    def adopt(self) -> None:
        """Record that the ledger belongs to this store (a store moved with its sidecar)."""
        assert self.store is not None
        self.append({"store": str(self.store)})

    def record_gap(self, through: int) -> None:
        """Record that transactions up to `through` are missing from this ledger."""
        assert self.store is not None
        self.append({"store": str(self.store), "lost_through": through})

    def without(self, aborted: set[int], aside: Path) -> None:
        """Rewrite the ledger without the lines of the `aborted` transactions (the ledger as
        it was kept at `aside`); every other line stays as it was."""
        data = self.path.read_bytes()
        kept = []
        for _, start, length, entry, tx in _entries_at(data, [], self.path):
            ident = tx.id if tx is not None else entry.get("tx_id")
            if ident not in aborted:
                kept.append(data[start : start + length].rstrip(b"\n") + b"\n")
        os.link(self.path, aside)  # no space needed: the new ledger is written first
        try:
            atomic_write(self.path, b"".join(kept), mode=0o600)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(aside)
            raise


_CHUNK = 1 << 20


class _NotStreamed(Exception):
    """A ledger line that orjson cannot write (a lone surrogate, an integer past 64 bits)."""


class _Line:
    """A ledger line written a chunk at a time, with what it needs in all (about)."""

    def __init__(self, total: int) -> None:
        self.total, self.done, self.written = total, 0, 0
        self.parts: list[bytes] = []
        self.held = 0

    def add(self, part: bytes) -> None:
        self.parts.append(part)
        self.held += len(part)

    def write(self, fd: int) -> None:
        view = memoryview(b"".join(self.parts))
        self.parts, self.held = [], 0
        while view:
            n = os.write(fd, view)
            self.written += n
            view = view[n:]

    def needs(self) -> int:
        so_far = self.written + self.held
        return so_far * max(self.total, 1) // max(self.done, 1)


def _cut_torn_line(fd: int) -> int:
    """Cut a torn last line a writer that died mid-append left; the size after."""
    size = os.fstat(fd).st_size
    if size:
        last = os.pread(fd, min(size, 1 << 20), max(0, size - (1 << 20)))
        if not last.endswith(b"\n"):
            cut = last.rfind(b"\n")
            size = size - len(last) + cut + 1 if cut >= 0 else 0
            os.ftruncate(fd, size)
    return size


class LedgerViews:
    """What a store derives from its ledger (`transactions`, oldest first): shared by every
    store."""

    path: Any

    def transactions(self) -> list[Transaction]:
        raise NotImplementedError

    def history(self) -> list[Transaction]:
        """Newest first."""
        return list(reversed(self.transactions()))

    def transaction(self, tx_id: int) -> Transaction:
        for tx in self.transactions():
            if tx.id == tx_id:
                return tx
        raise NotFoundError(f"{self.path}: no transaction {tx_id} in the ledger")

    def undone(self) -> dict[int, int]:
        """Transaction id → id of the undo that reverted it (for those currently undone)."""
        return undone_ids(self.transactions())
