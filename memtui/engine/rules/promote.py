"""thesearch's promote rule: proposed entries seen often enough, or old enough without a
conflicting entry, become active."""

from __future__ import annotations

from memtui.engine.candidates import (
    candidate_pairs,
)
from memtui.engine.rules.run import PlanRun, Step
from memtui.engine.rules.weight import effective_weight
from memtui.model import Status
from memtui.times import days_between


def _promote(run: PlanRun) -> None:
    b, profile, pairs, now, decay = run.b, run.profile, run.pairs, run.now, run.decay
    proposed = [b.current[i] for i in b.order if b.current[i].status is Status.PROPOSED]
    if not proposed:
        return
    # a proposed entry conflicts with any entry it is close to, active or proposed (the
    # candidate search above saw active entries only)
    near = candidate_pairs([*proposed, *b.eligible], profile.method, run.line)
    conflicted = {i for p in [*pairs, *near] for i in (p.a, p.b)}
    for memory in proposed:
        ident = memory.id
        if ident in b.locked:
            continue
        evidence = memory.evidence_count or 0
        weight = effective_weight(memory, now, decay)
        age_hours = days_between(memory.created_at, now) * 24 if memory.created_at else 0.0
        if evidence >= profile.promote_evidence:
            why = f"seen {evidence} times"
        elif evidence >= profile.promote_evidence_with_weight and weight >= profile.promote_weight:
            why = f"seen {evidence} times with weight {weight:.2f}"
        elif age_hours >= profile.promote_after_hours and ident not in conflicted:
            why = f"{age_hours:.0f} hours old with no conflicting entry"
        else:
            continue
        b.add(
            "promote",
            [ident],
            [memory.with_(status=Status.ACTIVE, updated_at=now)],
            "evidence ≥ 3, or ≥ 2 with weight ≥ 0.5, or 24 h without conflicts",
            {"evidence": evidence, "weight": weight, "age_hours": age_hours},
            f"Proposed entry {why}: promoted to active.",
            order=(b.place(ident),),
        )


PROMOTE = Step("promote", 0.97, _promote)
