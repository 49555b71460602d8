"""The read path: a fetched row straight to its `Memory`, at a million rows.

What `rows.to_memory(rows.image(values), side)` gives, built without the round trip through
text: the id and the lineage ids come as text from the server, the times as aware UTC
datetimes (a row's equal times one object), the strings rows repeat (users, categories,
models, tag sets) shared, and an embedding kept as packed doubles (`Vector`: 8 bytes a number
where a tuple of floats takes 32) that compares equal to the tuple of the same numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memtui.model import Memory, Status
from memtui.stores.postgres.rows import Side, embedding_of

# the rows come as `Shape.fast_select` selects them: ids as text, times as aware UTC datetimes
_STATUS = {s.value: s for s in Status}


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
        # the Go system stamps all three with one NOW() on insert: one object, not three
        if accessed == created:
            accessed = created
        if updated == created:
            updated = created
        if tags:
            tags = tuple(tags)
            tags = share(tags, tags)
        user = user or "legacy"
        category = category or "general"
        return Memory(
            id=ident,
            content=content if content is not None else "",
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
            embedding=embedding_of(embedding),
            version=version,
            extra=extra,
        )

    return memory_of
