"""thesearch's health figures for the store as it is now."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from memtui.engine.decay import DecayModel
from memtui.engine.rules.run import PlanRun, Step
from memtui.engine.rules.weight import effective_weight
from memtui.model import Memory, Status


def _health(run: PlanRun) -> None:
    """The skill's health figures, for the store as it is now."""
    kinds = Counter(a.kind for a in run.b.actions)
    run.health = health_figures(run.snapshot, kinds, run.now, run.decay, run.last_run)


def health_figures(
    memories: Sequence[Memory],
    kinds: Mapping[str, int],
    now: datetime,
    decay: DecayModel | None,
    last_run: datetime | None,
) -> dict[str, Any]:
    """The figures for the store, its plan's actions counted by kind."""
    active = [m for m in memories if m.status is Status.ACTIVE]
    proposed = [m for m in memories if m.status is Status.PROPOSED]
    weights = [effective_weight(m, now, decay) for m in active]
    return {
        "active": len(active),
        "proposed": len(proposed),
        "average_weight": round(sum(weights) / len(weights), 4) if weights else 0.0,
        "duplicate_candidates": kinds.get("merge", 0),
        "stale_candidates": kinds.get("deprecate", 0),
        "last_run": last_run.isoformat() if last_run else None,
    }


HEALTH = Step("health", 0.99, _health, store_wide=True)
