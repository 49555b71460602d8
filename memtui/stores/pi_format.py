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

import orjson

from memtui.errors import StoreFormatError
from memtui.model import Memory, Source, Status
from memtui.stores.document import Document
from memtui.stores.fields import EntryReader, json_type_name
from memtui.times import from_epoch_ms, to_epoch_ms

PI_TYPES = frozenset({"decision", "convention", "pattern", "preference", "fact", "lesson"})
# Content longer than this is refused by pi on add and update.
PI_CONTENT_CAP = 500
_KNOWN = frozenset(
    {
        "id", "type", "content", "paths", "potency", "source", "tags", "createdAt",
        "lastInjectedAt", "lastDecayedAt", "accessCount", "tenured", "evidenceCount", "userId",
    }
)  # fmt: skip


def _to_base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


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
            memory = self._decode(EntryReader(path, f"memories[{index}]", record), index)
            if memory.id in memories:
                raise StoreFormatError(f"{path}: memories[{index}] repeats the id {memory.id!r}")
            memories[memory.id] = memory
            raws[memory.id] = record
        return Document(memories, raws, {"top": value})

    def decode(self, raw: dict[str, Any], path: Path) -> Memory:
        return self._decode(EntryReader(path, "entry", raw), 0)

    def _decode(self, r: EntryReader, index: int) -> Memory:
        rec = r.record
        content = r.content()
        ident = r.opt_str("id")
        if not ident:
            # pi would invent a random id on its next load; a stable one keeps the ledger usable.
            digest = hashlib.sha1(f"{index}:{content}".encode()).hexdigest()[:8]
            ident = f"mem_noid_{index}_{digest}"
        kind = r.opt_str("type")
        created = r.epoch_ms("createdAt")
        injected = r.epoch_ms("lastInjectedAt") or created
        decayed = r.epoch_ms("lastDecayedAt") or injected
        source = r.opt_str("source")
        evidence = r.opt_int("evidenceCount")
        extra = {k: v for k, v in rec.items() if k not in _KNOWN}
        return Memory(
            id=ident,
            content=content,
            category=kind if kind in PI_TYPES else "fact",
            importance=min(1.0, max(0.0, r.number("potency", 0.8))),
            source=Source(source) if source in ("auto", "manual", "user") else Source.AUTO,
            tags=r.str_list("tags"),
            paths=r.str_list("paths"),
            created_at=created,
            last_accessed_at=injected,
            last_decayed_at=decayed,
            access_count=max(0, r.opt_int("accessCount") or 0),
            evidence_count=evidence if evidence is not None and evidence >= 1 else None,
            tenured=rec.get("tenured") is True,
            user_id=r.opt_str("userId"),
            extra=extra,
        )

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

    def render(self, doc: Document, now: datetime | None) -> bytes:
        top = dict(doc.header.get("top") or {"version": 1, "updatedAt": 0, "memories": []})
        top["version"] = 1
        if now is not None:
            top["updatedAt"] = to_epoch_ms(now)
        top["memories"] = [doc.raws[ident] for ident in doc.memories]
        return orjson.dumps(top, option=orjson.OPT_INDENT_2)

    def new_id(self, doc: Document, now: datetime) -> str:
        while True:
            ident = f"mem_{_to_base36(to_epoch_ms(now))}_{os.urandom(4).hex()}"
            if ident not in doc.memories:
                return ident


def _same_ms(raw: Any, when: datetime) -> bool:
    return isinstance(raw, int | float) and not isinstance(raw, bool) and from_epoch_ms(raw) == when


def _set_or_drop(out: dict[str, Any], key: str, value: Any) -> None:
    if value is None:
        out.pop(key, None)
    else:
        out[key] = value
