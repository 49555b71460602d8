"""The one in-memory record every layer speaks: `Memory`, with its `Status` and `Source`."""

from __future__ import annotations

import dataclasses
import functools
import operator
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from memtui.times import format_iso_cached as _iso
from memtui.times import parse_iso


class Status(StrEnum):
    ACTIVE = "active"
    ARCHIVED = "archived"
    MERGED = "merged"
    SUPERSEDED = "superseded"
    DEPRECATED = "deprecated"
    PROPOSED = "proposed"
    DELETED = "deleted"
    # The Go long-term system holds unverified records back from recall ("quarantined").
    QUARANTINED = "quarantined"


# Entries in these statuses have been replaced or removed: hidden unless asked for.
HIDDEN_STATUSES = frozenset({Status.MERGED, Status.SUPERSEDED, Status.DELETED})


# Shown beside entries wherever they are listed: the status in a glyph, not in colour alone.
STATUS_SYMBOL = {
    Status.ACTIVE: "●",
    Status.ARCHIVED: "◌",
    Status.MERGED: "⊕",
    Status.SUPERSEDED: "↷",
    Status.DEPRECATED: "▽",
    Status.PROPOSED: "?",
    Status.DELETED: "✗",
    Status.QUARANTINED: "⚠",
}


class Source(StrEnum):
    """Who wrote the entry, lowest to highest priority (pi's order)."""

    AUTO = "auto"
    MANUAL = "manual"
    USER = "user"


SOURCE_PRIORITY = {Source.AUTO: 0, Source.MANUAL: 1, Source.USER: 2}


NO_EXTRA: dict[str, Any] = {}
"""The `extra` of every entry a store read without unknown fields: one dict, never changed in
place (entries are values; a new `extra` is a new dict)."""


@dataclass(slots=True)
class Memory:
    """One memory entry; a superset of the pi, longterm and native schemas.

    Treat instances as values: change them with `dataclasses.replace` (or `Memory.with_`).
    Fields the source format has and memtui does not know are kept in `extra`.
    """

    id: str
    content: str
    category: str = "fact"
    importance: float = 0.8
    source: Source = Source.AUTO
    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    created_at: datetime | None = None
    last_accessed_at: datetime | None = None
    last_decayed_at: datetime | None = None
    updated_at: datetime | None = None
    access_count: int = 0
    evidence_count: int | None = None
    tenured: bool = False
    user_id: str | None = None
    status: Status = Status.ACTIVE
    supersedes: tuple[str, ...] = ()
    superseded_by: str | None = None
    superseded_at: datetime | None = None
    embedding: tuple[float, ...] | None = None
    version: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def with_(self, **changes: Any) -> Memory:
        """A copy with `changes` (what `dataclasses.replace` gives, without its per-call
        introspection: decay copies every entry of a store)."""
        if not changes.keys() <= _FIELD_NAMES:
            raise TypeError(f"Memory has no field {sorted(changes.keys() - _FIELD_NAMES)[0]!r}")
        new = Memory(*memory_values(self))
        for name, value in changes.items():
            setattr(new, name, value)
        return new

    @property
    def visible(self) -> bool:
        return self.status not in HIDDEN_STATUSES

    def to_dict(self) -> dict[str, Any]:
        """The canonical JSON form: the native store's document and the ledger's images."""
        return {
            "id": self.id,
            "content": self.content,
            "category": self.category,
            "importance": self.importance,
            "source": self.source.value,
            "tags": list(self.tags),
            "paths": list(self.paths),
            "created_at": _iso(self.created_at),
            "last_accessed_at": _iso(self.last_accessed_at),
            "last_decayed_at": _iso(self.last_decayed_at),
            "updated_at": _iso(self.updated_at),
            "access_count": self.access_count,
            "evidence_count": self.evidence_count,
            "tenured": self.tenured,
            "user_id": self.user_id,
            "status": self.status.value,
            "supersedes": list(self.supersedes),
            "superseded_by": self.superseded_by,
            "superseded_at": _iso(self.superseded_at),
            "embedding": list(self.embedding) if self.embedding is not None else None,
            "version": self.version,
            "extra": self.extra,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Memory:
        """Inverse of `to_dict`; trusts its input (validated by the store that read it)."""
        emb = d.get("embedding")
        return cls(
            id=d["id"],
            content=d["content"],
            category=d.get("category", "fact"),
            importance=d.get("importance", 0.8),
            source=Source(d.get("source", "auto")),
            tags=tuple(d.get("tags") or ()),
            paths=tuple(d.get("paths") or ()),
            created_at=parse_iso(d.get("created_at")),
            last_accessed_at=parse_iso(d.get("last_accessed_at")),
            last_decayed_at=parse_iso(d.get("last_decayed_at")),
            updated_at=parse_iso(d.get("updated_at")),
            access_count=d.get("access_count", 0),
            evidence_count=d.get("evidence_count"),
            tenured=d.get("tenured", False),
            user_id=d.get("user_id"),
            status=Status(d.get("status", "active")),
            supersedes=tuple(d.get("supersedes") or ()),
            superseded_by=d.get("superseded_by"),
            superseded_at=parse_iso(d.get("superseded_at")),
            embedding=tuple(emb) if emb is not None else None,
            version=d.get("version"),
            extra=d.get("extra") or {},
        )


MEMORY_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Memory))
_FIELD_NAMES = frozenset(MEMORY_FIELDS)
memory_values = operator.attrgetter(*MEMORY_FIELDS)
"""Every field's value of an entry, in `MEMORY_FIELDS` order."""


@functools.cache
def _values_but(names: frozenset[str]) -> operator.attrgetter[Any]:
    return operator.attrgetter(*(f for f in MEMORY_FIELDS if f not in names))


def same_except(a: Memory, b: Memory, names: frozenset[str]) -> bool:
    """Whether two entries are equal in every field but `names` (without copying either)."""
    values = _values_but(names)
    return bool(values(a) == values(b))
