"""The expiry rule: old entries of low importance expire (deleted) or are archived, except the
protected top and, without a decision, what was once important."""

from __future__ import annotations

from collections.abc import Sequence

from memtui.engine.profiles import Profile
from memtui.engine.rules.run import PlanRun, Step
from memtui.model import Memory, Status
from memtui.times import days_between


def protected_entries(memories: Sequence[Memory], top: int) -> set[str]:
    """The entries with most incoming supersedes links (the Go system's protection)."""
    incoming: dict[str, int] = {}
    for m in memories:
        for _old in m.supersedes:
            incoming[m.id] = incoming.get(m.id, 0) + 1
    ranked = sorted(incoming, key=lambda i: -incoming[i])
    return set(ranked[:top])


def _expire(run: PlanRun) -> None:
    """Old entries of low importance expire (`expire`: deleted) or are archived."""
    b, profile, now = run.b, run.profile, run.now
    protected = run.protected
    if protected is None:
        protected = frozenset(protected_entries(run.snapshot, profile.protect_top))
    original = {m.id: m for m in run.snapshot}
    status = Status.DELETED if profile.expire_kind == "expire" else Status.ARCHIVED
    for memory in b.active():
        if memory.id in b.locked or memory.id in protected or memory.tenured:
            continue
        if memory.created_at is None:
            continue
        age = days_between(memory.created_at, now)
        if age <= profile.expire_after_days or memory.importance >= profile.expire_below:
            continue
        after = memory.with_(status=status, updated_at=now)
        verb = "expires" if status is Status.DELETED else "is archived"
        scores = {"age_days": age, "importance": memory.importance}
        reason = (
            f"{age:.0f} days old with importance {memory.importance:.2f} (below "
            f"{profile.expire_below:g}): {verb}, restorable from the ledger."
        )
        once = _once_important(profile, memory, original.get(memory.id))
        if once:
            scores["original_importance"] = original.get(memory.id, memory).importance
            reason = (
                f"{age:.0f} days old, importance now {memory.importance:.2f}, but this "
                f"{memory.category} was once important ({once}): it {verb} only if you "
                "decide so."
            )
        b.add(
            profile.expire_kind or "expire",
            [memory.id],
            [after],
            f"older than {profile.expire_after_days:g} days and importance < "
            f"{profile.expire_below:g}",
            scores,
            reason,
            needs_decision=bool(once),
            order=(b.place(memory.id),),
        )


def _once_important(profile: Profile, memory: Memory, original: Memory | None) -> str:
    """Why `memory` must not go without a decision ("" when it may): an identity, preference
    or fact whose importance before decay (in the snapshot, or an `original_importance` field
    the store keeps) reached the guard line, or that was seen often enough."""
    if not profile.guard_once_important or memory.category not in profile.conflict_categories:
        return ""
    known = [memory.importance, original.importance if original else 0.0]
    stored = memory.extra.get("original_importance")
    if isinstance(stored, int | float) and not isinstance(stored, bool):
        known.append(float(stored))
    if max(known) >= profile.guard_importance:
        return f"importance {max(known):.2f}"
    if (memory.evidence_count or 0) >= profile.guard_evidence:
        return f"seen {memory.evidence_count} times"
    return ""


EXPIRE = Step("expiry", 0.95, _expire)
