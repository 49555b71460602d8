"""A `long_term_memory` row ↔ `Memory`, the row images the ledger keeps, and the outbox events
the Go system writes for a changed row.

A row image is the row as JSON (times as RFC 3339 UTC strings with microseconds), so undo
writes back exactly what was there. Statuses the Go columns cannot hold (archived, merged,
deprecated, proposed) and the decay anchor live in memtui's side table (`Side`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import orjson

from memtui.model import Memory, Status
from memtui.stores.postgres.content_hash import content_hash, go_time
from memtui.stores.postgres.vector import vector
from memtui.times import format_iso, parse_iso

COLUMNS = (
    "id",
    "user_id",
    "content",
    "importance",
    "embedding",
    "embedding_model",
    "embedding_revision",
    "created_at",
    "last_accessed",
    "updated_at",
    "category",
    "tags",
    "slot_hint",
    "quarantined",
    "quarantine_reason",
    "superseded",
    "superseded_at",
    "supersedes",
    "version",
    "content_hash",
    "deleted_at",
)
TIMES = frozenset({"created_at", "last_accessed", "updated_at", "superseded_at", "deleted_at"})
# what memtui writes of a row (the id and user stay; version, hash, updated_at are computed)
WRITTEN = tuple(c for c in COLUMNS if c not in ("id",))
# columns whose change is a change of the agent's row (the rest follow from a write)
_CONTENT = tuple(c for c in COLUMNS if c not in ("id", "version", "content_hash", "updated_at"))
MEMTUI_ONLY = frozenset({Status.ARCHIVED, Status.MERGED, Status.DEPRECATED, Status.PROPOSED})
_EXTRA = ("embedding_model", "embedding_revision", "slot_hint", "quarantine_reason", "content_hash")

Row = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Side:
    """memtui's side-table entry for one row."""

    status: str | None = None
    last_decayed_at: datetime | None = None

    @classmethod
    def of(cls, memory: Memory) -> Side:
        status = memory.status.value if memory.status in MEMTUI_ONLY else None
        return cls(status, memory.last_decayed_at)

    @property
    def empty(self) -> bool:
        return self.status is None and self.last_decayed_at is None


def _utc(value: datetime | date | None) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, datetime):  # a DATE column read as it is
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def image(values: tuple[Any, ...]) -> Row:
    """A fetched row (in `COLUMNS` order) as a JSON-able image; NULL stays None."""
    row = dict(zip(COLUMNS, values, strict=True))
    for key in TIMES:
        row[key] = format_iso(_utc(row[key]))
    for key in ("tags", "supersedes"):
        if row[key] is not None:
            row[key] = list(row[key])
    if isinstance(row["importance"], Decimal):
        row["importance"] = float(row["importance"])
    return row


def embedding_of(raw: Any) -> tuple[float, ...] | None:
    """The numbers of an embedding column's value: a JSON array, or text (or a JSON string)
    holding one; None for anything else, which a write keeps as it is."""
    if raw is None:
        return None
    if isinstance(raw, str):
        try:
            raw = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return None
    if not isinstance(raw, list):
        return None
    try:
        return vector(raw)
    except (TypeError, ValueError):
        return None


# what a column's value reads as: a write keeps the row's own value when memtui's reads the same
# (NULL tags stay NULL, not '{}'; a text embedding stays text)
_READS: dict[str, Any] = {
    "content": lambda v: v or "",
    "category": lambda v: v or "general",
    "importance": lambda v: float(v) if v is not None else 0.5,
    "embedding": embedding_of,
    "tags": lambda v: list(v or ()),
    "supersedes": lambda v: [int(i) for i in v or ()],
    "quarantined": bool,
    "superseded": bool,
    "quarantine_reason": lambda v: v or None,
}


def status_of(row: Row, side: Side | None) -> Status:
    marked = Status(side.status) if side is not None and side.status else None
    if row["deleted_at"] is not None:
        return Status.MERGED if marked is Status.MERGED else Status.DELETED
    if row["quarantined"]:
        return Status.QUARANTINED
    if marked is not None and marked is not Status.MERGED:
        return marked
    return Status.SUPERSEDED if row["superseded"] else Status.ACTIVE


def to_memory(row: Row, side: Side | None) -> Memory:
    importance = row["importance"]
    return Memory(
        id=str(row["id"]),
        content=row["content"] or "",
        category=row["category"] or "general",
        importance=min(1.0, max(0.0, float(importance))) if importance is not None else 0.5,
        tags=tuple(row["tags"] or ()),
        created_at=parse_iso(row["created_at"]),
        last_accessed_at=parse_iso(row["last_accessed"]),
        last_decayed_at=side.last_decayed_at if side is not None else None,
        updated_at=parse_iso(row["updated_at"]),
        user_id=row["user_id"] or "legacy",
        status=status_of(row, side),
        supersedes=tuple(str(i) for i in row["supersedes"] or ()),
        superseded_at=parse_iso(row["superseded_at"]),
        embedding=embedding_of(row["embedding"]),
        version=row["version"],
        extra={k: row[k] for k in _EXTRA if row[k]},
    )


def encode(memory: Memory, base: Row | None, now: datetime) -> Row:
    """The row for `memory`, on top of the row as it is (`base`; None for a new row)."""
    status = memory.status
    if base is None:
        extra = memory.extra
        row: Row = {
            "id": None,
            "user_id": memory.user_id,
            "embedding_model": extra.get("embedding_model", ""),
            "embedding_revision": extra.get("embedding_revision", ""),
            "created_at": format_iso(memory.created_at or now),
            "last_accessed": format_iso(memory.last_accessed_at or now),
            "slot_hint": extra.get("slot_hint") or None,
            "quarantine_reason": None,
            "version": 0,
            "content_hash": "",
            "deleted_at": None,
            "superseded": False,
        }
    else:
        row = dict(base)
        if memory.last_accessed_at is not None:
            row["last_accessed"] = format_iso(memory.last_accessed_at)
    tombstone = status in (Status.DELETED, Status.MERGED)
    # the Go system's own tombstones from a consolidation keep their `superseded`
    go_replaced = status is Status.DELETED and row["deleted_at"] is not None and row["superseded"]
    superseded = status in (Status.SUPERSEDED, Status.MERGED) or go_replaced
    superseded_at = memory.superseded_at
    if superseded and superseded_at is None:
        superseded_at = memory.updated_at or now
    row.update(
        content=memory.content,
        importance=memory.importance,
        embedding=list(memory.embedding) if memory.embedding is not None else None,
        category=memory.category,
        tags=list(memory.tags),
        quarantined=status is Status.QUARANTINED,
        superseded=superseded,
        superseded_at=format_iso(superseded_at),
        supersedes=[int(i) for i in memory.supersedes],
        deleted_at=(row["deleted_at"] or format_iso(now)) if tombstone else None,
    )
    if base is not None:
        for key, reads in _READS.items():
            if reads(row[key]) == reads(base[key]):
                row[key] = base[key]
    return row


def differs(row: Row, base: Row) -> bool:
    return any(row[c] != base[c] for c in _CONTENT)


def written(row: Row, version: int, now: datetime) -> Row:
    """`row` as a write leaves it: the next version, `updated_at`, and Go's content hash."""
    out = {**row, "version": version, "updated_at": format_iso(now)}
    out["content_hash"] = content_hash({**out, "memory_id": out["id"]})
    return out


def record(row: Row) -> dict[str, Any]:
    """The Go `MemoryRecord` JSON of a row: the outbox payload."""
    out = {k: row[k] for k in COLUMNS if k != "id"}
    out["memory_id"] = row["id"]
    out["user_id"] = row["user_id"] or "legacy"
    for key in TIMES:
        if out[key] is not None:
            out[key] = go_time(out[key])
    return out


_UPSERT = (("upsert_memory_vector", "milvus"), ("upsert_memory_graph_node", "neo4j"))
_EDGES = ("upsert_memory_graph_edges", "neo4j")
_DELETE = (
    ("delete_memory_vector", "milvus"),
    ("delete_memory_graph_edges", "neo4j"),
    ("delete_memory_graph_node", "neo4j"),
)


def outbox_events(row: Row, base: Row | None) -> list[tuple[Any, ...]]:
    """(event_id, aggregate_id, user_id, aggregate_version, event_type, target, payload) for
    each event the Go system writes when `base` becomes `row`."""
    if row["deleted_at"] is not None:
        kinds: tuple[tuple[str, str], ...] = _DELETE
    else:
        links = sorted(row["supersedes"] or ()) != sorted(base["supersedes"] or () if base else ())
        kinds = (*_UPSERT, _EDGES) if links else _UPSERT
    payload = record(row)
    return [
        (
            str(uuid.uuid4()),
            row["id"],
            row["user_id"] or "legacy",
            row["version"],
            event_type,
            target,
            payload,
        )
        for event_type, target in kinds
    ]
