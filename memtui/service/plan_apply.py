"""Applying a plan: its approved actions' changes made ready (checked, counted), then
committed as one transaction. A plan file written user by user is made ready a user at a time
(`planfile.by_user`), so that a whole store's plan never holds every action at once."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from memtui import planfile
from memtui.engine.plan import Plan, plan_changes
from memtui.errors import MemtuiError
from memtui.planfile.by_user import NotByUser, read_by_user
from memtui.stores import Actor, Change, Transaction
from memtui.stores.progress import CommitProgress
from memtui.stores.protocol import MemoryStore
from memtui.timeline import check_not_before_entries, check_plan_not_ahead
from memtui.views import kind_counts


@dataclass(slots=True)
class ReadyToApply:
    """A plan's approved actions, checked, as the changes of one transaction."""

    profile: str
    plan_now: datetime
    chosen: list[str]
    """The approved actions' ids, in plan order."""
    kinds: list[str]
    """Their kinds."""
    touched: int
    """How many entries they touch."""
    waiting: list[str]
    """The kinds of the actions neither approved nor skipped (waiting for a decision)."""
    llm: bool
    """Whether a model made any of them."""
    changes: list[Change]


def ready(
    plan: Plan, approved: Sequence[str], skip: Collection[str] = (), *, release: bool = False
) -> ReadyToApply:
    """`approved` (but `skip`) of `plan` as changes (`release`: the plan's actions let go of
    once they are made: a whole store's weigh as much as the commit)."""
    chosen = [a for a in approved if a not in skip]
    for ident in chosen:
        plan.action(ident)  # the plan has it
    out = ReadyToApply(plan.profile, plan.now, [], [], 0, [], False, [])
    _add(out, plan, chosen, skip)
    if release:
        plan.release()
    return out


def _add(out: ReadyToApply, plan: Plan, chosen: list[str], skip: Collection[str]) -> None:
    changes = plan_changes(plan, chosen)
    out.changes.extend(Change(c.before, c.after) for c in changes)
    out.chosen.extend(chosen)
    picked = [plan.action(a) for a in chosen]
    out.kinds.extend(a.kind for a in picked)
    out.touched += len({t for a in picked for t in a.targets})
    taken = {*chosen, *skip}
    out.waiting.extend(a.kind for a in plan.actions if a.id not in taken)
    out.llm = out.llm or any(a.actor == Actor.LLM for a in picked)


def ready_from_file(
    path: str,
    store: MemoryStore,
    seal_key: bytes | None,
    only: Sequence[str] | None = None,
    skip: Collection[str] = (),
) -> ReadyToApply:
    """The plan file at `path` checked against `store` (as `planfile.load` checks it), its
    actions `only` (default: all that need no decision) but `skip` made ready. Read a user at
    a time where it can be (not for `only`: those may name any action)."""
    if only is None:
        try:
            return _ready_by_user(path, store, seal_key, skip)
        except (NotByUser, MemtuiError):
            pass  # read whole: a problem is named there, in the whole reading's words
    plan = planfile.load(path, store, seal_key)
    check_entries_not_ahead(plan)
    made = ready(plan, list(only) if only else plan.default_approved(), skip, release=True)
    if only:
        made.waiting = []
    return made


def _ready_by_user(
    path: str, store: MemoryStore, seal_key: bytes | None, skip: Collection[str]
) -> ReadyToApply:
    head, runs = read_by_user(path, store, seal_key)
    out = ReadyToApply(head.profile, head.now, [], [], 0, [], False, [])
    for run in runs:
        check_entries_not_ahead(run)
        _add(out, run, [a for a in run.default_approved() if a not in skip], skip)
        run.release()
    return out


def check_entries_not_ahead(plan: Plan) -> None:
    """Refuse a plan whose time is before that of an entry it finds."""
    check_not_before_entries(
        (m for action in plan.actions for m in action.before), plan.now, "the plan's time"
    )


def commit_ready(
    store: MemoryStore,
    made: ReadyToApply,
    *,
    now: datetime,
    progress: CommitProgress | None = None,
) -> Transaction:
    """The changes made ready as one transaction at `now` (refused if the plan's time is
    ahead of it)."""
    check_plan_not_ahead(made.plan_now, now)
    if not made.chosen:
        raise MemtuiError("no action is approved; nothing to apply")
    if not made.changes:
        raise MemtuiError("the approved actions change nothing")
    details = {
        "profile": made.profile,
        "actions": made.chosen,
        "plan_now": made.plan_now.isoformat(),
    }
    changes, made.changes = made.changes, []
    return store.commit(
        changes,
        actor=Actor.LLM if made.llm else Actor.PLAN,
        kind="plan",
        reason=f"{made.profile} plan: {kind_counts(made.kinds)}",
        now=now,
        details=details,
        progress=progress,
    )
