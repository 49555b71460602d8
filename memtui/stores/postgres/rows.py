"""A `long_term_memory` row ↔ `Memory`, the row images the ledger keeps, and the outbox events
the Go system writes for a changed row.

A row image is the row as JSON (times as RFC 3339 UTC strings with microseconds), so undo
writes back exactly what was there. Statuses the Go columns cannot hold (archived, merged,
deprecated, proposed) and the decay anchor live in memtui's side table (`Side`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

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


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def image(values: tuple[Any, ...]) -> Row:
    """A fetched row (in `COLUMNS` order) as a JSON-able image."""
    row = dict(zip(COLUMNS, values, strict=True))
    for key in TIMES:
        row[key] = format_iso(_utc(row[key]))
    row["tags"] = list(row["tags"] or ())
    row["supersedes"] = list(row["supersedes"] or ())
    return row


def db_value(key: str, value: Any) -> Any:
    """An image's value as the column takes it (`TIMESTAMP` without time zone: naive UTC)."""
    if key in TIMES:
        when = parse_iso(value)
        return when.replace(tzinfo=None) if when is not None else None
    return value


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
    embedding = row["embedding"]
    importance = row["importance"]
    return Memory(
        id=str(row["id"]),
        content=row["content"],
        category=row["category"] or "general",
        importance=min(1.0, max(0.0, float(importance))) if importance is not None else 0.5,
        tags=tuple(row["tags"]),
        created_at=parse_iso(row["created_at"]),
        last_accessed_at=parse_iso(row["last_accessed"]),
        last_decayed_at=side.last_decayed_at if side is not None else None,
        updated_at=parse_iso(row["updated_at"]),
        user_id=row["user_id"] or "legacy",
        status=status_of(row, side),
        supersedes=tuple(str(i) for i in row["supersedes"]),
        superseded_at=parse_iso(row["superseded_at"]),
        embedding=vector(embedding) if embedding is not None else None,
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
        links = sorted(row["supersedes"]) != sorted(base["supersedes"] if base else [])
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
