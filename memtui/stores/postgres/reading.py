"""The read path: the select list and a fetched row straight to its `Memory`, at a million rows.

What `rows.to_memory(rows.image(values), side)` gives, built without the round trip through
text: the id and the lineage ids come as text from the server, the times as aware UTC
datetimes, the strings rows repeat (users, categories, models, tag sets) are shared, and an
embedding is kept as a packed array of doubles (`Vector`: 8 bytes a number instead of a
float object and a tuple slot, 32) that compares equal to the tuple of the same numbers.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from memtui.model import Memory, Status
from memtui.stores.postgres.rows import TIMES, Side
from memtui.stores.postgres.vector import vector

# in `memory_of`'s order; the `TIMESTAMP` columns (UTC by the Go system's NOW()) as
# `timestamptz`, which the driver turns into aware datetimes itself on a UTC session
SELECT = (
    "id::text",
    "user_id",
    "content",
    "importance",
    "embedding",
    "embedding_model",
    "embedding_revision",
    *(f"{c} AT TIME ZONE 'UTC'" for c in ("created_at", "last_accessed", "updated_at")),
    "category",
    "tags",
    "slot_hint",
    "quarantined",
    "quarantine_reason",
    "superseded",
    "superseded_at AT TIME ZONE 'UTC'",
    "supersedes::text[]",
    "version",
    "content_hash",
    "deleted_at AT TIME ZONE 'UTC'",
)
assert sum("AT TIME ZONE" in c for c in SELECT) == len(TIMES)
_STATUS = {s.value: s for s in Status}


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Python's cycle collector off while a million acyclic entries are built: otherwise it
    walks every entry built so far again and again, and a load grows faster than its rows."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def reader(sides: dict[int, Side]) -> Callable[[tuple[Any, ...]], Memory]:
    """`memory_of(values)` for rows fetched as `SELECT`, sharing the strings rows repeat."""
    shared: dict[Any, Any] = {}
    share = shared.setdefault
    side_of = sides.get

    def memory_of(values: tuple[Any, ...]) -> Memory:
        (
            ident,
            user,
            content,
            importance,
            embedding,
            model,
            revision,
            created,
            accessed,
            updated,
            category,
            tags,
            slot,
            quarantined,
            reason,
            superseded,
            superseded_at,
            supersedes,
            version,
            digest,
            deleted,
        ) = values
        side = side_of(int(ident)) if sides else None
        marked = _STATUS[side.status] if side is not None and side.status else None
        if deleted is not None:
            status = Status.MERGED if marked is Status.MERGED else Status.DELETED
        elif quarantined:
            status = Status.QUARANTINED
        elif marked is not None and marked is not Status.MERGED:
            status = marked
        else:
            status = Status.SUPERSEDED if superseded else Status.ACTIVE
        extra = {}
        if model:
            extra["embedding_model"] = share(model, model)
        if revision:
            extra["embedding_revision"] = share(revision, revision)
        if slot:
            extra["slot_hint"] = slot
        if reason:
            extra["quarantine_reason"] = reason
        if digest:
            extra["content_hash"] = digest
        if tags:
            tags = tuple(tags)
            tags = share(tags, tags)
        user = user or "legacy"
        category = category or "general"
        return Memory(
            id=ident,
            content=content,
            category=share(category, category),
            importance=min(1.0, max(0.0, float(importance))) if importance is not None else 0.5,
            tags=tags or (),
            created_at=created,
            last_accessed_at=accessed,
            last_decayed_at=side.last_decayed_at if side is not None else None,
            updated_at=updated,
            user_id=share(user, user),
            status=status,
            supersedes=tuple(supersedes) if supersedes else (),
            superseded_at=superseded_at,
            embedding=vector(embedding) if embedding is not None else None,
            version=version,
            extra=extra,
        )

    return memory_of
