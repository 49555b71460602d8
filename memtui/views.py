"""What the front ends show: selecting and sorting memories, and the documented JSON shapes
of `--json` output (docs/design.md#json-output)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memtui.engine.kinds import kind_of
from memtui.errors import MemtuiError
from memtui.model import MEMORY_FIELDS, Memory, Status
from memtui.stores import Backup, MemoryStore, Store, Transaction
from memtui.times import format_iso

if TYPE_CHECKING:
    from memtui.engine.plan import Action

SORT_ALIASES = {
    "user": "user_id",
    "created": "created_at",
    "age": "created_at",
    "used": "last_accessed_at",
    "last_used": "last_accessed_at",
    "accessed": "last_accessed_at",
    "accesses": "access_count",
    "updated": "updated_at",
}
SORTABLE = tuple(f for f in MEMORY_FIELDS if f not in ("extra", "embedding", "tags", "paths"))


def parse_statuses(spec: str | None) -> frozenset[Status] | None:
    """`None`/"visible": all but merged, superseded, deleted; "all": every status;
    else a comma-separated list of statuses."""
    if spec in (None, "", "visible"):
        return frozenset(
            s for s in Status if s not in (Status.MERGED, Status.SUPERSEDED, Status.DELETED)
        )
    if spec == "all":
        return None
    out = set()
    for name in spec.split(","):
        try:
            out.add(Status(name.strip()))
        except ValueError:
            known = ", ".join(s.value for s in Status)
            raise MemtuiError(
                f"unknown status {name.strip()!r} (use all, visible, {known})"
            ) from None
    return frozenset(out)


def sort_key_field(name: str) -> str:
    field = SORT_ALIASES.get(name, name)
    if field not in SORTABLE:
        raise MemtuiError(f"cannot sort by {name!r} (use one of: {', '.join(SORTABLE)})")
    return field


def matches(memory: Memory, needle: str) -> bool:
    """Case-insensitive substring over content, tags, id and category; `needle` lowercased."""
    return (
        needle in memory.content.lower()
        or needle in memory.id.lower()
        or needle in memory.category.lower()
        or any(needle in tag.lower() for tag in memory.tags)
    )


def select(
    memories: Iterable[Memory],
    *,
    statuses: frozenset[Status] | None = None,
    user: str | None = None,
    query: str | None = None,
    sort: str | None = None,
    descending: bool = False,
    limit: int | None = None,
) -> list[Memory]:
    needle = query.lower() if query else None
    out = [
        m
        for m in memories
        if (statuses is None or m.status in statuses)
        and (user is None or m.user_id == user)
        and (needle is None or matches(m, needle))
    ]
    if sort:
        field = sort_key_field(sort)
        present = [m for m in out if getattr(m, field) is not None]
        missing = [m for m in out if getattr(m, field) is None]
        present.sort(key=lambda m: _sortable(getattr(m, field)), reverse=descending)
        out = present + missing
    return out[:limit] if limit is not None else out


def _sortable(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def memory_record(memory: Memory) -> dict[str, Any]:
    """One memory in `--json` output: the canonical record, the embedding as its length."""
    record = memory.to_dict()
    embedding = record.pop("embedding")
    record["embedding_dims"] = len(embedding) if embedding is not None else None
    return record


def transaction_record(tx: Transaction, undone_by: int | None = None) -> dict[str, Any]:
    return {
        "id": tx.id,
        "at": format_iso(tx.at),
        "actor": tx.actor,
        "kind": tx.kind,
        "reason": tx.reason,
        "memory_ids": tx.memory_ids,
        "undoes": tx.undoes,
        "undone_by": undone_by,
        "backup": tx.backup,
        "details": tx.details,
    }


def transaction_detail(tx: Transaction, undone_by: int | None = None) -> dict[str, Any]:
    """A transaction with the before and after image of each memory it touched."""
    record = transaction_record(tx, undone_by)
    record["changes"] = [{"id": c.id, "before": c.before, "after": c.after} for c in tx.changes]
    return record


def backup_record(backup: Backup) -> dict[str, Any]:
    return {
        "name": backup.name,
        "at": format_iso(backup.at),
        "tx": backup.tx_id,
        "bytes": backup.size,
    }


def store_stats(store: MemoryStore) -> dict[str, Any]:
    memories = store.memories()
    created = [m.created_at for m in memories if m.created_at is not None]
    return {
        "path": str(store.path),
        "format": store.format_name,
        "total": len(memories),
        # counted by member, named after (an enum's `.value` costs a call per entry)
        "by_status": {s.value: n for s, n in Counter(m.status for m in memories).most_common()},
        "by_category": dict(Counter(m.category for m in memories).most_common()),
        "by_source": {s.value: n for s, n in Counter(m.source for m in memories).most_common()},
        "users": dict(Counter(m.user_id for m in memories if m.user_id is not None).most_common()),
        "tenured": sum(m.tenured for m in memories),
        "oldest": format_iso(min(created)) if created else None,
        "newest": format_iso(max(created)) if created else None,
        "transactions": len(store.transactions()),
        "backups": len(store.backups()),
        "findings": store.findings() if isinstance(store, Store) else [],
        "journal_bytes": store.journal_bytes() if isinstance(store, Store) else None,
        "file_bytes": store.file_bytes() if isinstance(store, Store) else None,
    }


def age_text(when: datetime | None, now: datetime) -> str:
    """`3m`, `5h`, `12d`, `2y`: compact ages for tables."""
    if when is None:
        return "-"
    seconds = (now - when).total_seconds()
    if seconds < 0:
        return "now"
    for unit, size in (("y", 365 * 86400), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def kind_counts(kinds: Iterable[str]) -> str:
    """ "merge 3, decay 12": each kind with its count, in the order kinds first appear."""
    counts = Counter(kinds)
    return ", ".join(f"{kind} {n}" for kind, n in counts.items())


def entry_count(n: int) -> str:
    """ "1 entry", "3 entries"."""
    return f"{n} entr{'y' if n == 1 else 'ies'}"


def counted(n: int, noun: str) -> str:
    """ "1 transaction", "3 transactions" (`entry_count` for entry)."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def action_subject(action: Action) -> str:
    """What an action is about, as its content (as its kind says, `engine/kinds.py`): the
    wording it keeps, both entries it weighs, else the entry it changes."""
    subject = kind_of(action.kind).subject
    if subject == "kept":
        kept = [m for m in action.after if m.status is Status.ACTIVE]
        if kept:
            return kept[0].content
    if subject == "pair" and len(action.before) >= 2:
        return " ⟷ ".join(m.content for m in action.before[:2])
    first = action.before or action.after
    return first[0].content if first else ""
