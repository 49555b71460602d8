"""`make_plan`: the runner of the consolidation rules (engine/rules/) over a snapshot, as
reviewable actions.

Order (it matters, rules/table.py `steps_for`): decay → absorb duplicates → merge → conflicts →
expire / archive / deprecate → protect → promote. Each step sees the entries as the earlier
steps left them, and each action records the earlier actions on the same entries as its
dependencies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from memtui.engine.decay import decay_for, decay_for_store
from memtui.engine.embedded import Embeddings
from memtui.engine.plan import Plan
from memtui.engine.profiles import Profile
from memtui.engine.rules.pi_dedupe_fold import DEDUPE_RULE, redo_pi_dedupe
from memtui.engine.rules.run import Builder, MergedText, PlanRun, Progress, Step
from memtui.engine.rules.table import EXPIRE_STEPS, MERGE_RULE_STEPS, lowest_line, steps_for
from memtui.errors import MemtuiError
from memtui.gcpause import gc_paused
from memtui.model import Memory
from memtui.times import to_base36, to_epoch_ms

__all__ = [
    "DEDUPE_RULE",
    "EXPIRE_STEPS",
    "MERGE_RULE_STEPS",
    "Cancelled",
    "Progress",
    "Step",
    "make_plan",
    "redo_pi_dedupe",
    "steps_for",
]


class Cancelled(MemtuiError):
    """Planning was cancelled by the person waiting for it."""


def make_plan(
    memories: Sequence[Memory],
    profile: Profile,
    now: datetime,
    **options: Any,
) -> Plan:
    """The plan for `memories` under `profile` as of `now` (see `_make_plan` for options)."""
    with gc_paused():
        return _make_plan(memories, profile, now, **options)


def _make_plan(
    memories: Sequence[Memory],
    profile: Profile,
    now: datetime,
    *,
    store: str = "",
    store_format: str = "native",
    fingerprint: str = "",
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
    last_run: datetime | None = None,
    embeddings: Embeddings | None = None,
    session: str | None = None,
    merged_text: MergedText | None = None,
) -> Plan:
    """`embeddings`: sentence embeddings to combine with the `memtui` method's lexical score
    (engine/embedded.py); other methods ignore them. The plan's params say what was used.
    `session` names the consolidation in the entries the pi rule creates (pi's
    `sourceSession`; default `memtui-plan-<now, epoch ms in base 36>`). `merged_text` stands
    in for pi's model when given: the merged wording of a cluster, or None for a veto."""

    def report(name: str, fraction: float) -> None:
        if cancelled is not None and cancelled():
            raise Cancelled("planning cancelled")
        if progress is not None:
            progress(name, fraction)

    b = Builder(memories, store_format, now, profile.cluster_max)
    if profile.method == "memtui":
        b.embeddings = embeddings
    run = PlanRun(
        b,
        profile,
        now,
        memories,
        decay_for_store(profile, memories),
        session or f"memtui-plan-{to_base36(to_epoch_ms(now))}",
        merged_text,
        last_run,
        report,
        lowest_line(profile),
    )
    for step in steps_for(profile):
        report(step.name, step.start)
        step.run(run)
    report("done", 1.0)
    params = profile.to_dict()
    if run.decay is not None and run.decay != decay_for(profile):  # the store's own (decay.py)
        params["decay_model"] = run.decay.name
        params["decay_slower"] = dict(run.decay.slower)
    params["similarity"] = _similarity_used(profile, b.embeddings)
    plan = Plan(store, store_format, fingerprint, profile.name, now, params, b.actions)
    if run.health is not None:
        plan.health = run.health
    plan.warnings = run.warnings
    return plan


def _similarity_used(profile: Profile, embeddings: Embeddings | None) -> dict[str, Any]:
    if embeddings is None:
        return {"method": profile.method}
    return {"method": "memtui+embed", "model": embeddings.model}
