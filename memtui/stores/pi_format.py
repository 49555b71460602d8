"""The pi agent's `memory-store.json` (see the pi FORMAT notes in DESIGN.md §2-3).

Entries are read with pi's own defaults; entries memtui does not change are written back as
they were, and the file keeps pi's layout: 2-space indented JSON, mode 0600.
"""

from __future__ import annotations

import hashlib
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from memtui.errors import StoreFormatError
from memtui.jsonout import dumps
from memtui.model import Memory, Source, Status
from memtui.stores.document import Document
from memtui.stores.fields import (
    MAX_CONTENT_CHARS,
    OPT_LIST,
    OPT_NUM,
    OPT_STR,
    EntryReader,
    json_type_name,
)
from memtui.times import from_epoch_ms, to_base36, to_epoch_ms

PI_TYPES = frozenset({"decision", "convention", "pattern", "preference", "fact", "lesson"})
# Content longer than this is refused by pi on add and update.
PI_CONTENT_CAP = 500
_KNOWN = frozenset(
    {
        "id",
        "type",
        "content",
        "paths",
        "potency",
        "source",
        "tags",
        "createdAt",
        "lastInjectedAt",
        "lastDecayedAt",
        "accessCount",
        "tenured",
        "evidenceCount",
        "userId",
    }
)


class PiFormat:
    name = "pi"
    ledger_in_file = False
    file_mode = 0o600

    def parse(self, value: Any, path: Path) -> Document:
        if not isinstance(value, dict):
            raise StoreFormatError(f"{path}: not a pi store (top level is not an object)")
        entries = value.get("memories")
        if not isinstance(entries, list):
            got = json_type_name(entries) if "memories" in value else "missing"
            raise StoreFormatError(f"{path}: 'memories' must be a list, got {got}")
        memories: dict[str, Memory] = {}
        raws: dict[str, dict[str, Any]] = {}
        for index, record in enumerate(entries):
            memory = _read(record, index, path, "memories[{}]")
            if memory.id in memories:
                raise StoreFormatError(f"{path}: memories[{index}] repeats the id {memory.id!r}")
            memories[memory.id] = memory
            raws[memory.id] = record
        return Document(memories, raws, {"top": value})

    def decode(self, raw: dict[str, Any], path: Path) -> Memory:
        return _read(raw, 0, path, "entry")

    def encode(self, memory: Memory, base: dict[str, Any] | None) -> dict[str, Any] | None:
        if not self.keeps(memory):
            return None
        out: dict[str, Any] = dict(base) if base else {}
        for key in [k for k in out if k not in _KNOWN and k not in memory.extra]:
            del out[key]
        out["type"] = memory.category if memory.category in PI_TYPES else "fact"
        out["content"] = memory.content
        out["paths"] = list(memory.paths)
        out["potency"] = memory.importance
        out["source"] = memory.source.value
        out["tags"] = list(memory.tags)
        out.update(memory.extra)
        _set_or_drop(out, "evidenceCount", memory.evidence_count)
        out["id"] = memory.id
        for key, when in (
            ("createdAt", memory.created_at),
            ("lastInjectedAt", memory.last_accessed_at),
            ("lastDecayedAt", memory.last_decayed_at),
        ):
            if when is not None and not (key in out and _same_ms(out[key], when)):
                out[key] = to_epoch_ms(when)
        out["accessCount"] = memory.access_count
        _set_or_drop(out, "tenured", True if memory.tenured else None)
        _set_or_drop(out, "userId", memory.user_id)
        return out

    def keeps(self, memory: Memory) -> bool:
        return memory.status is Status.ACTIVE

    def successor(self, raw: dict[str, Any], current: dict[str, Any] | None) -> dict[str, Any]:
        """The record to write over `current` (this format keeps no version counter)."""
        return raw

    def record_image(self, image: dict[str, Any], raw: dict[str, Any]) -> dict[str, Any] | None:
        """The record itself: the ledger keeps it so undo writes it back byte for byte."""
        return raw

    def render(self, doc: Document, now: datetime | None) -> bytes:
        top = {**file_header(doc, now), "memories": [doc.raws[ident] for ident in doc.memories]}
        # keep the key order the file had
        order = list(doc.header.get("top") or {"version": 1, "updatedAt": 0, "memories": []})
        ordered = {key: top[key] for key in order if key in top}
        ordered.update(top)
        return dumps(ordered, indent=True)

    def new_id(self, doc: Document, now: datetime) -> str:
        while True:
            ident = f"mem_{to_base36(to_epoch_ms(now))}_{os.urandom(4).hex()}"
            if ident not in doc.memories:
                return ident


_SOURCES = {s.value: s for s in Source}


def _read(record: Any, index: int, path: Path, where: str) -> Memory:
    try:
        return _build(record, index)
    except (TypeError, ValueError, OverflowError, KeyError, AttributeError):
        pass
    where = where.format(index)
    _explain(EntryReader(path, where, record))
    raise StoreFormatError(f"{path}: {where} cannot be read")


def _build(rec: dict[str, Any], index: int) -> Memory:
    """An entry with pi's own defaults; raises ValueError (or TypeError) on a wrong type, and
    `_explain` then says which."""
    get = rec.get
    content = rec["content"]
    ident, kind, source, user = get("id"), get("type"), get("source"), get("userId")
    created, injected, decayed = get("createdAt"), get("lastInjectedAt"), get("lastDecayedAt")
    potency, accesses, evidence = get("potency"), get("accessCount"), get("evidenceCount")
    tags, paths = get("tags"), get("paths")
    if not (
        type(content) is str
        and len(content) <= MAX_CONTENT_CHARS
        and type(ident) in OPT_STR
        and type(kind) in OPT_STR
        and type(source) in OPT_STR
        and type(user) in OPT_STR
        and type(created) in OPT_NUM
        and type(injected) in OPT_NUM
        and type(decayed) in OPT_NUM
        and type(potency) in OPT_NUM
        and type(accesses) in OPT_NUM
        and type(evidence) in OPT_NUM
        and type(tags) in OPT_LIST
        and type(paths) in OPT_LIST
        and (not tags or all(type(t) is str for t in tags))
        and (not paths or all(type(p) is str for p in paths))
    ):
        raise ValueError("wrong type")
    if not ident:
        # pi would invent a random id on its next load; a stable one keeps the ledger usable.
        digest = hashlib.sha1(f"{index}:{content}".encode()).hexdigest()[:8]
        ident = f"mem_noid_{index}_{digest}"
    created = None if created is None else from_epoch_ms(created)
    injected = created if injected is None else from_epoch_ms(injected)
    decayed = injected if decayed is None else from_epoch_ms(decayed)
    extra = {k: rec[k] for k in rec.keys() - _KNOWN}
    return Memory(
        id=ident,
        content=content,
        category=kind if kind in PI_TYPES else "fact",
        importance=0.8 if potency is None else min(1.0, max(0.0, float(potency))),
        source=_SOURCES.get(source, Source.AUTO),  # type: ignore[arg-type]
        tags=tuple(tags) if tags else (),
        paths=tuple(paths) if paths else (),
        created_at=created,
        last_accessed_at=injected,
        last_decayed_at=decayed,
        access_count=max(0, int(accesses or 0)),
        evidence_count=int(evidence) if evidence is not None and evidence >= 1 else None,
        tenured=get("tenured") is True,
        user_id=user,
        extra=extra,
    )


def _explain(r: EntryReader) -> None:
    """Raise the error that names what is wrong with an entry that failed the schema."""
    r.content()
    for key in ("id", "type", "source", "userId"):
        r.opt_str(key)
    for key in ("createdAt", "lastInjectedAt", "lastDecayedAt"):
        r.epoch_ms(key)
    r.number("potency", 0.8)
    r.number("accessCount", 0)
    r.number("evidenceCount", 1)
    r.str_list("tags")
    r.str_list("paths")


def file_header(doc: Document, now: datetime | None) -> dict[str, Any]:
    """pi's top-level keys but `memories`, as the next write leaves them (`updatedAt` is the
    time of the write, unless `now` is None)."""
    top = doc.header.get("top") or {"version": 1, "updatedAt": 0}
    header = {k: v for k, v in top.items() if k != "memories"}
    header["version"] = 1
    if now is not None:
        header["updatedAt"] = to_epoch_ms(now)
    return header


def with_file_header(top: dict[str, Any], header: dict[str, Any]) -> dict[str, Any]:
    """`top` with its keys but `memories` replaced by `header`, in the file's key order."""
    out = {k: ([] if k == "memories" else header[k]) for k in top if k == "memories" or k in header}
    out.update({k: v for k, v in header.items() if k not in out})
    out.setdefault("memories", [])
    return out


_ABSENT = object()


def reverted_header(
    current: dict[str, Any],
    before: dict[str, Any],
    after: dict[str, Any],
    now: datetime,
) -> dict[str, Any]:
    """pi's top-level keys for a write that reverts memtui's own change `before` → `after`
    (undo, rollback) on top of the file as it is now (`current`).

    Only keys memtui itself changed are reverted, and only while they still hold memtui's
    value: what the agent wrote since (its quotas, `resolvedSources`, `adaptation`) stays.
    `updatedAt` goes back only when nobody wrote since; otherwise it is the time of this write
    (or the agent's, if its clock is ahead).
    """
    out = dict(current)
    reverted_stamp = False
    for key in dict.fromkeys([*before, *after]):
        was, memtui_wrote = before.get(key, _ABSENT), after.get(key, _ABSENT)
        if was == memtui_wrote or current.get(key, _ABSENT) != memtui_wrote:
            continue
        if was is _ABSENT:
            out.pop(key, None)
        else:
            out[key] = was
        reverted_stamp |= key == "updatedAt"
    if not reverted_stamp:
        stamp = current.get("updatedAt")
        known = stamp if isinstance(stamp, int | float) and not isinstance(stamp, bool) else 0
        out["updatedAt"] = max(to_epoch_ms(now), known)  # never back past the agent's write
    out["version"] = 1
    return out


def _same_ms(raw: Any, when: datetime) -> bool:
    return isinstance(raw, int | float) and not isinstance(raw, bool) and from_epoch_ms(raw) == when


def _set_or_drop(out: dict[str, Any], key: str, value: Any) -> None:
    if value is None:
        out.pop(key, None)
    else:
        out[key] = value
