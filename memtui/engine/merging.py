"""How entries become one: merge strategies and absorption. Nothing is dropped: the members
stay in the store (status `merged`, `superseded_by` the result), and the result carries
the union of their metadata."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from memtui.engine.choices import MERGE_RULES
from memtui.errors import MemtuiError
from memtui.model import SOURCE_PRIORITY, Memory, Source, Status

RULES = MERGE_RULES
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def priority(memory: Memory) -> tuple[int, float, datetime]:
    """Whose wording wins: the user's over manual over auto, then importance, then newest."""
    return (SOURCE_PRIORITY[memory.source], memory.importance, memory.created_at or _EPOCH)


def best_member(members: Sequence[Memory]) -> Memory:
    return max(members, key=priority)


def longterm_base(members: Sequence[Memory]) -> Memory:
    """The Go system's base: the higher importance (ties: the newer)."""
    return max(members, key=lambda m: (m.importance, m.created_at or _EPOCH))


def fold_contents(base: Memory, others: Sequence[Memory]) -> str:
    """`base；other` unless one contains the other, then the longer (the Go system's rule)."""
    content = base.content
    for other in others:
        if other.content in content:
            continue
        content = other.content if content in other.content else f"{content}；{other.content}"
    return content


def _union(values: Sequence[Sequence[str]], cap: int) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v for group in values for v in group))[:cap]


def _merge_extra(members: Sequence[Memory]) -> dict[str, object]:
    extra: dict[str, object] = {}
    for member in members:
        for key, value in member.extra.items():
            if extra.get(key) in (None, "") and value not in (None, ""):
                extra[key] = value
    return extra


def _category(base: Memory, members: Sequence[Memory]) -> str:
    """The base's category, upgraded from `general` when another member knows better."""
    if base.category != "general":
        return base.category
    return next((m.category for m in members if m.category != "general"), base.category)


def _weighted_embedding(members: Sequence[Memory]) -> tuple[float, ...] | None:
    vectors = [m for m in members if m.embedding]
    if not vectors or len({len(m.embedding or ()) for m in vectors}) != 1:
        return next((m.embedding for m in members if m.embedding), None)
    total = sum(m.importance for m in vectors) or float(len(vectors))
    weights = [m.importance / total if total else 1 / len(vectors) for m in vectors]
    dim = len(vectors[0].embedding or ())
    return tuple(
        sum(w * (m.embedding or ())[k] for w, m in zip(weights, vectors, strict=True))
        for k in range(dim)
    )


def _evidence(members: Sequence[Memory]) -> int:
    """memtui counts repetition: each member is at least one sighting."""
    return sum(max(1, m.evidence_count or 1) for m in members)


def merge_entries(
    members: Sequence[Memory],
    *,
    new_id: str,
    now: datetime,
    rule: str,
    content: str | None = None,
    max_paths: int = 20,
    max_tags: int = 5,
    base: Memory | None = None,
) -> tuple[Memory, list[Memory]]:
    """A new entry standing for `members` (in store order), and the members retired into it.

    rule `pi`: the best member's wording (pi asks a model; memtui keeps the user's, else the
    strongest), type of the first member, paths ≤ 20 and tags ≤ 5 unions, importance max,
    accesses summed, tenured if any, source auto, a fresh entry (created now).
    rule `longterm`: base = higher importance, `base；other` wording, embedding mean weighted by
    importance, category upgraded from general, created at the oldest member's time.
    rule `keep-base` / `thesearch`: the best member's wording, other fields as `longterm`.
    rule `memtui`: as `keep-base`; its wording (engine/wording.py) comes in as `content`.
    `content` (a person's text) overrides the wording of any rule.
    `base`: the member whose wording `content` starts from, when it is not the rule's: its
    category and its own fields (a file's name, a title) are the merged entry's.
    """
    if len(members) < 2:
        raise MemtuiError("a merge needs at least two entries")
    users = {m.user_id for m in members}
    if len(users) > 1:
        shown = ", ".join(sorted(str(u) for u in users))
        raise MemtuiError(f"cannot merge entries of different users ({shown})")
    if rule not in RULES:
        raise MemtuiError(f"unknown merge rule {rule!r} (use {', '.join(RULES)})")
    chosen: Memory
    if rule == "longterm":
        chosen = longterm_base(members)
        wording = fold_contents(
            chosen, sorted((m for m in members if m is not chosen), key=lambda m: -m.importance)
        )
    else:
        in_group = base is not None and any(base is m for m in members)
        chosen = base if base is not None and in_group else best_member(members)
        wording = chosen.content
    if content is not None:
        if not content.strip():
            raise MemtuiError("the merged text must not be empty")
        wording = content
    created = [m.created_at for m in members if m.created_at]
    accessed = [m.last_accessed_at for m in members if m.last_accessed_at]
    if rule == "pi":
        category, source = members[0].category, Source.AUTO
        created_at, accessed_at = now, now
    else:
        category, source = (
            _category(chosen, members),
            max((m.source for m in members), key=SOURCE_PRIORITY.__getitem__),
        )
        created_at = min(created) if created else now
        accessed_at = max(accessed) if accessed else now
    merged = Memory(
        id=new_id,
        content=wording,
        category=category,
        importance=max(m.importance for m in members),
        source=source,
        tags=_union([m.tags for m in members], max_tags),
        paths=_union([m.paths for m in members], max_paths),
        created_at=created_at,
        last_accessed_at=accessed_at,
        last_decayed_at=now,
        updated_at=now,
        access_count=sum(m.access_count for m in members),
        evidence_count=_evidence(members),
        tenured=any(m.tenured for m in members),
        user_id=members[0].user_id,
        supersedes=tuple(m.id for m in members),
        embedding=_weighted_embedding(members),
        extra=_merge_extra([chosen, *members]),
    )
    return merged, retire(members, merged.id, now)


def absorb_entries(
    survivor: Memory,
    absorbed: Sequence[Memory],
    *,
    now: datetime,
    boost: float = 0.0,
    max_paths: int = 20,
    max_tags: int = 5,
) -> tuple[Memory, list[Memory]]:
    """`survivor` keeps its wording and takes in everything else the duplicates knew: tags,
    paths, accesses, evidence, the earliest creation, the latest use, a better category,
    missing fields such as `slot_hint`; importance is the highest (plus `boost`)."""
    everyone = [survivor, *absorbed]
    created = [m.created_at for m in everyone if m.created_at]
    accessed = [m.last_accessed_at for m in everyone if m.last_accessed_at]
    kept = survivor.with_(
        # pi adds its boost to the survivor; the Go system keeps the higher importance
        importance=min(1.0, survivor.importance + boost)
        if boost
        else max(m.importance for m in everyone),
        category=_category(survivor, everyone),
        tags=_union([m.tags for m in everyone], max(max_tags, len(survivor.tags))),
        paths=_union([m.paths for m in everyone], max(max_paths, len(survivor.paths))),
        created_at=min(created) if created else None,
        last_accessed_at=max(accessed) if accessed else None,
        access_count=sum(m.access_count for m in everyone),
        evidence_count=_evidence(everyone),
        tenured=any(m.tenured for m in everyone),
        source=max((m.source for m in everyone), key=SOURCE_PRIORITY.__getitem__),
        supersedes=tuple(dict.fromkeys([*survivor.supersedes, *(m.id for m in absorbed)])),
        updated_at=now,
        extra=_merge_extra(everyone),
    )
    return kept, retire(absorbed, survivor.id, now)


def retire(
    members: Sequence[Memory], into: str, now: datetime, status: Status = Status.MERGED
) -> list[Memory]:
    return [
        m.with_(status=status, superseded_by=into, superseded_at=now, updated_at=now)
        for m in members
    ]
