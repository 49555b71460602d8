"""pi's dedupe after a merge: entries of identical normalised content fold into the most
potent one, across the whole store, and the same fold planned again after a review."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime

from memtui.engine.merging import retire
from memtui.engine.pi_dedupe import pi_dedupe_groups, pi_fold
from memtui.engine.plan import FOLLOWS, Plan
from memtui.engine.rules.run import Builder
from memtui.engine.wholesale import held
from memtui.model import Memory
from memtui.traits import OWN_IDS

DEDUPE_RULE = "pi: dedupe of identical normalised content after a merge"


def redo_pi_dedupe(plan: Plan, memories: Sequence[Memory]) -> Plan:
    """`plan` with pi's dedupe planned again for the merges that are now approved by default
    (a model vetoed some, or could not be asked): none when no merge is left, as pi folds
    nothing then. Action ids of the other actions stay."""
    others = [a for a in plan.actions if a.rule != DEDUPE_RULE]
    plan = Plan(
        plan.store,
        plan.store_format,
        plan.store_fingerprint,
        plan.profile,
        plan.now,
        plan.params,
        others,
        dict(plan.health),
        warnings=list(plan.warnings),
    )
    # what the wholesale guard holds is replayed as approved: a person may approve it still
    plan.decisions = {a.id: True for a in others if held(a)}
    approved = set(plan.default_approved())
    plan.decisions = {}
    merges = [a.id for a in others if a.kind == "merge" and a.id in approved]
    if not merges:
        return plan
    # pi's dedupe creates no entry: any id style will do
    b = Builder(memories, OWN_IDS, plan.now, int(plan.params.get("cluster_max", 8)))
    for action in others:
        if action.id in approved:
            for memory in action.after:
                if memory.id not in b.current:
                    b.order.append(memory.id)
                    b.position[memory.id] = len(b.order) - 1
                b.current[memory.id] = memory
                b.last_touch[memory.id] = action.id
    b.actions = list(others)
    next_id = max((int(a.id[1:]) for a in others), default=0)
    before = len(b.actions)
    pi_dedupe(b, plan.now, merges)
    # after every id the plan already uses
    added = [
        dataclasses.replace(a, id=f"a{next_id + n}")
        for n, a in enumerate(b.actions[before:], start=1)
    ]
    return dataclasses.replace(plan, actions=[*others, *added])


def pi_dedupe(b: Builder, now: datetime, merges: list[str]) -> None:
    """pi's dedupe after a consolidation that merged something: entries whose normalised
    content is identical fold into the most potent one, across the whole store."""
    step = max(1, b.cap - 1)
    for survivor_id, folded_ids in pi_dedupe_groups(b.active()):
        # pi folds one twin after the other: over the cap, the same folds in several actions
        for start in range(0, len(folded_ids), step):
            chunk = folded_ids[start : start + step]
            survivor = b.current[survivor_id]
            folded = [b.current[i] for i in chunk]
            kept = pi_fold(survivor, folded)
            retired = retire(folded, survivor_id, now)
            # pi folds only when some merge is applied: each fold follows the plan's merges
            b.add(
                "absorb",
                [survivor_id, *chunk],
                [kept, *retired],
                DEDUPE_RULE,
                {"size": 1 + len(folded_ids)},
                f"{1 + len(folded_ids)} entries say exactly the same (ignoring case, spaces "
                "and punctuation): pi folds them into the most potent one after it merges.",
                details={FOLLOWS: merges},
            )
