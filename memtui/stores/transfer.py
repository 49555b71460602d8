"""New store files: a native store from memories (demo, import), and exports to any format."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memtui.errors import MemtuiError
from memtui.model import Memory
from memtui.stores.file.backups import DEFAULT_KEEP
from memtui.stores.file.files import atomic_write, writing
from memtui.stores.file.store import Store
from memtui.stores.formats.document import Document
from memtui.stores.formats.native import new_meta
from memtui.stores.formats.records import Records
from memtui.stores.formats.registry import FORMATS
from memtui.stores.ledger import Actor, Transaction
from memtui.stores.protocol import MemoryStore

# `memtui export --format` names, as each format's traits declare them
EXPORTS = {f.traits.export_as: f for f in FORMATS.values() if f.traits.export_as is not None}
EXPORT_FORMATS = tuple(EXPORTS)


def _refuse_existing(path: Path) -> None:
    if path.exists():
        raise MemtuiError(f"{path}: already exists; memtui will not overwrite it")
    if not path.parent.is_dir():
        raise MemtuiError(f"{path.parent}: no such folder")


def create_native_store(
    path: Path,
    memories: Iterable[Memory],
    *,
    now: datetime,
    kind: str,
    reason: str,
    meta: dict[str, Any] | None = None,
    keep_backups: int = DEFAULT_KEEP,
) -> Store:
    """Write a new native store holding `memories`; the ledger starts with one entry saying
    where they came from (the entries themselves are the after-image)."""
    _refuse_existing(path)
    fmt = FORMATS["native"]
    doc = Document({}, Records(), {"meta": new_meta(now, **(meta or {})), "journal": []})
    for memory in memories:
        if memory.id in doc.memories:
            raise MemtuiError(f"two memories share the id {memory.id!r}")
        doc.memories[memory.id] = memory
        doc.raws[memory.id] = fmt.encode(memory, None)  # type: ignore[assignment]
    tx = Transaction(1, now, Actor.USER, kind, reason, [], details={"entries": len(doc.memories)})
    doc.header["journal"].append(tx.to_dict())
    with writing(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, fmt.render(doc, now), mode=fmt.file_mode)
    return Store.open(path, keep_backups)


def is_demo_store(store: Store) -> bool:
    """Whether `store` is a native store memtui made as its demo (its meta says so)."""
    meta = store.document().header.get("meta", {})
    return store.format is FORMATS["native"] and isinstance(meta, dict) and bool(meta.get("demo"))


@dataclass(frozen=True, slots=True)
class ExportReport:
    path: Path
    format: str
    written: int
    dropped: int
    renumbered: bool
    as_fact: dict[str, int] = field(default_factory=dict)
    """pi: entries whose category is not one of pi's types, by category (written as fact)."""


def export_store(store: MemoryStore, dest: Path, export_as: str, now: datetime) -> ExportReport:
    """Write the store's entries to a new file in another (or the same) format.

    The same format keeps every record as the source has it (unknown keys, layout).
    A format that holds some statuses only (pi: active) leaves the others out (and counts
    them); one that numbers its ids (longterm) renumbers other ids (the old id kept as
    `memtui_id`); one with a fixed set of categories (pi) counts the others (written as fact).
    """
    fmt = EXPORTS.get(export_as)
    if fmt is None:
        raise MemtuiError(f"unknown export format {export_as!r} (use {', '.join(EXPORT_FORMATS)})")
    _refuse_existing(dest)
    memories = store.memories()
    renumbered = False
    same = isinstance(store, Store) and store.format is fmt
    if isinstance(store, Store) and same:
        doc = store.document()
        doc.header = fmt.export_header(doc.header, now)
    else:
        if fmt.traits.ids.numbered and not all(m.id.isdigit() for m in memories):
            memories, renumbered = _renumber(memories), True
        doc = Document({}, Records(), fmt.export_header(None, now))
        for memory in memories:
            raw = fmt.encode(memory, None)
            if raw is not None:
                doc.memories[memory.id] = memory
                doc.raws[memory.id] = raw
    data = fmt.render(doc, now)
    with writing(dest, len(data)):
        atomic_write(dest, data, mode=fmt.file_mode)
    os.chmod(dest, fmt.file_mode)
    written = len(doc.memories)
    as_fact: dict[str, int] = {}
    categories = fmt.traits.categories
    if categories is not None and not same:
        for m in doc.memories.values():
            if m.category not in categories:
                as_fact[m.category] = as_fact.get(m.category, 0) + 1
    return ExportReport(dest, export_as, written, len(memories) - written, renumbered, as_fact)


def _renumber(memories: list[Memory]) -> list[Memory]:
    numbers = {m.id: str(n) for n, m in enumerate(memories, start=1)}
    out = []
    for m in memories:
        out.append(
            m.with_(
                id=numbers[m.id],
                supersedes=tuple(numbers.get(s, s) for s in m.supersedes),
                superseded_by=numbers.get(m.superseded_by, m.superseded_by)
                if m.superseded_by
                else None,
                extra={**m.extra, "memtui_id": m.id},
            )
        )
    return out
