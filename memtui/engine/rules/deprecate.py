"""thesearch's deprecate rule: old, never used entries of low weight are deprecated (never
deleted), linked to a newer neighbour when there is one."""

from __future__ import annotations

from memtui.engine.rules.run import PlanRun, Step, live
from memtui.engine.rules.weight import effective_weight
from memtui.model import Status
from memtui.times import days_between


def _deprecate(run: PlanRun) -> None:
    b, profile, pairs, now, decay = run.b, run.profile, run.pairs, run.now, run.decay
    neighbours: dict[str, list[str]] = {}
    for p in pairs:
        neighbours.setdefault(p.a, []).append(p.b)
        neighbours.setdefault(p.b, []).append(p.a)
    for memory in b.active():
        if memory.id in b.locked or memory.created_at is None or memory.access_count:
            continue
        age = days_between(memory.created_at, now)
        weight = effective_weight(memory, now, decay)
        if age < profile.expire_after_days or weight > profile.deprecate_weight:
            continue
        newer = [
            b.current[n]
            for n in neighbours.get(memory.id, [])
            if live(b, n) and (b.current[n].created_at or now) > memory.created_at
        ]
        replacement = max(newer, key=lambda m: m.created_at or now).id if newer else None
        after = memory.with_(status=Status.DEPRECATED, superseded_by=replacement, updated_at=now)
        link = f", replaced by {replacement}" if replacement else ""
        b.add(
            "deprecate",
            [memory.id],
            [after],
            f"≥ {profile.expire_after_days:g} days, weight ≤ {profile.deprecate_weight:g}, "
            "never accessed",
            {"age_days": age, "weight": weight},
            f"{age:.0f} days old, never used, effective weight {weight:.2f}: deprecated "
            f"(never deleted){link}.",
            order=(b.place(memory.id),),
        )


DEPRECATE = Step("expiry", 0.95, _deprecate)
