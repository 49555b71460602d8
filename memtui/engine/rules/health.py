"""thesearch's health figures for the store as it is now."""

from __future__ import annotations

from memtui.engine.rules.run import PlanRun, Step
from memtui.engine.rules.weight import effective_weight
from memtui.model import Status


def _health(run: PlanRun) -> None:
    """The skill's health figures, for the store as it is now."""
    memories, actions, now, decay = run.snapshot, run.b.actions, run.now, run.decay
    last_run = run.last_run
    active = [m for m in memories if m.status is Status.ACTIVE]
    proposed = [m for m in memories if m.status is Status.PROPOSED]
    weights = [effective_weight(m, now, decay) for m in active]
    kinds = [a.kind for a in actions]
    run.health = {
        "active": len(active),
        "proposed": len(proposed),
        "average_weight": round(sum(weights) / len(weights), 4) if weights else 0.0,
        "duplicate_candidates": kinds.count("merge"),
        "stale_candidates": kinds.count("deprecate"),
        "last_run": last_run.isoformat() if last_run else None,
    }


HEALTH = Step("health", 0.99, _health, store_wide=True)
