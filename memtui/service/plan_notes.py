"""What a store's format tells the planner and a plan: the profile as the store can use it
(no decay where the store holds no importance) and the notes of a plan (a limit of the agent's
it would pass: Claude Code's 200-line index, Hermes' character caps)."""

from __future__ import annotations

import dataclasses

from memtui.engine.plan import Plan, plan_changes
from memtui.engine.profiles import Profile
from memtui.errors import MemtuiError
from memtui.stores import Change
from memtui.stores.file.store import Store as FileStore
from memtui.stores.protocol import MemoryStore
from memtui.traits import FormatTraits


def profile_for(profile: Profile, traits: FormatTraits) -> Profile:
    """`profile` without its decay step where the store keeps no importance: decay actions
    would write nothing there, yet stand in the plan and the ledger."""
    if traits.holds_importance or not profile.apply_decay:
        return profile
    return dataclasses.replace(profile, apply_decay=False)


def plan_notes(store: MemoryStore, plan: Plan) -> list[str]:
    """The store's notes on its state after the plan's default-approved actions."""
    if not store.traits.plan_notes or not isinstance(store, FileStore):
        return []
    approved = plan.default_approved()
    if not approved:
        return []
    try:
        planned = plan_changes(plan, approved)
    except MemtuiError:
        return []
    return store.plan_notes([Change(c.before, c.after) for c in planned])
