"""The decay rule: each active entry's importance as the profile's decay model leaves it by now."""

from __future__ import annotations

from memtui.engine.decay import DecayModel
from memtui.engine.plan_compact import decay_reason
from memtui.engine.rules.run import PlanRun, Step
from memtui.model import Memory


def _decay(run: PlanRun) -> None:
    b, profile, now, decay = run.b, run.profile, run.now, run.decay
    if decay is None:
        return
    for memory in b.active():
        if decay.exempt(memory):
            continue
        days = decay.elapsed(memory, now)
        new = decay.value_after(memory, days)
        change = memory.importance - new
        moves_anchor = decay.name == "pi" and memory.last_decayed_at != now
        if (change <= 0 or change < profile.decay_min_change) and not moves_anchor:
            continue
        after = memory.with_(importance=new, last_decayed_at=now)
        rule = f"decay:{decay.name} ×{decay.rate:g}/day"
        reason = decay_reason(days, memory.importance, new, decay.rate, profile.archive_line)
        if decay.slower:  # memtui's own, in a store where no use was ever recorded
            rule, reason = _unused_decay(decay, memory, days, new)
        b.add(
            "decay",
            [memory.id],
            [after],
            rule,
            {"days": days, "from": memory.importance, "to": new},
            reason,
            order=(b.place(memory.id),),
        )


def _unused_decay(decay: DecayModel, memory: Memory, days: float, new: float) -> tuple[str, str]:
    """The rule and reason of a decay by half-life in a store where no use was recorded."""
    slower = ", ".join(f"{c} ×{f:g}" for c, f in decay.slower)
    return (
        f"decay:halflife 30 + 335 × importance days ({slower}), no use recorded",
        f"No use was ever recorded in this store: {days:.0f} days since it was made, "
        f"importance {memory.importance:.2f} → {new:.2f} (half-life "
        f"{decay.half_life(memory):.0f} days).",
    )


DECAY = Step("decay", 0.0, _decay)
