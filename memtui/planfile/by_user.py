"""A version-2 plan file read a user at a time: its actions come in runs of one user's (a plan
written by `memtui plan` comes user after user), and each run is filled from the store and
checked as `load` checks a whole plan, then let go of by the caller. A whole store's plan then
never holds every action and record at once (1M entries: the actions alone are 2 GB).

Whatever does not read so (another version, a store read by id, an action of two users, a
user's actions in two runs, a dependency across runs) raises NotByUser, and the caller reads
the file whole; so does any problem, which the whole reading then names in its own words.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from memtui.engine.plan import Action, Plan, follows
from memtui.model import Memory
from memtui.planfile.checks import Fitting, ReadsRowsById, check_made_for
from memtui.planfile.compact import compact_actions
from memtui.planfile.reading import KnownActions, parse_head, plan_value
from memtui.planfile.seals import Seals, read_seals
from memtui.stores import MemoryStore


class NotByUser(Exception):
    """The plan file is not one to read a user at a time: read it whole."""


class UserRuns(NamedTuple):
    head: Plan
    """The plan without its actions."""
    runs: Iterator[Plan]
    """Its actions, a run of one user's at a time, each checked (with its decisions)."""


def read_by_user(path: str, store: MemoryStore, seal_key: bytes | None) -> UserRuns:
    """The plan file at `path` for `store`, a user at a time; NotByUser if it does not read
    so, a MemtuiError for a problem found before its actions (the runs raise those found in
    them: both are named again, in the whole reading's words, by `load`)."""
    if isinstance(store, ReadsRowsById):
        raise NotByUser
    value = plan_value(path)
    if not isinstance(value, dict) or value.get("version") != 2:
        raise NotByUser
    seals = read_seals(value.pop("seals", None), path)
    decisions = _decisions(value.pop("decisions", None))
    head, raws, _ = parse_head(value, path)
    del value
    check_made_for(store, head)
    return UserRuns(head, _runs(head, raws, Fitting(store), seals, decisions, seal_key, path))


def _decisions(raw: object) -> dict[str, bool]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise NotByUser
    approved, rejected = raw.get("approved", []), raw.get("rejected", [])
    if not all(
        isinstance(ids, list) and all(isinstance(i, str) for i in ids)
        for ids in (approved, rejected)
    ):
        raise NotByUser
    return {**dict.fromkeys(approved, True), **dict.fromkeys(rejected, False)}


_NO_ONE = object()


def _runs(
    head: Plan,
    raws: list[Any],
    fitting: Fitting,
    seals: Seals,
    decisions: Mapping[str, bool],
    seal_key: bytes | None,
    path: str,
) -> Iterator[Plan]:
    known = KnownActions(path)
    done: set[object] = set()
    user: object = _NO_ONE
    actions: list[Action] = []
    pending: dict[str, Any] = {}
    new: dict[str, object] = {}  # the entries the run's actions create: whose they are
    try:
        for action, raw in compact_actions(raws, head.params, drop=True):
            known.add(action)
            owner = _owner(action, fitting.current, new)
            if owner != user and actions:
                yield _run(head, actions, pending, fitting, seals, decisions, seal_key)
                done.add(user)
                actions, pending, new = [], {}, {}
            if owner in done:
                raise NotByUser
            user = owner
            new.update((t, owner) for t in action.targets if t not in fitting.current)
            if any(d not in pending for d in action.depends_on):
                raise NotByUser
            actions.append(action)
            pending[action.id] = raw
    except (KeyError, TypeError, ValueError, AttributeError):
        raise NotByUser from None
    if actions:
        yield _run(head, actions, pending, fitting, seals, decisions, seal_key)
    if not decisions.keys() <= known.ids:
        raise NotByUser


def _owner(action: Action, current: Mapping[str, Memory], new: Mapping[str, object]) -> object:
    """The one user whose entries the action targets, in the store or made by the run's
    actions before it (NotByUser for none or several)."""
    users = {
        m.user_id if (m := current.get(t)) is not None else new.get(t, _NO_ONE)
        for t in action.targets
    }
    users.discard(_NO_ONE)  # an entry the action itself creates
    if len(users) != 1:
        raise NotByUser
    return users.pop()


def _run(
    head: Plan,
    actions: list[Action],
    pending: dict[str, Any],
    fitting: Fitting,
    seals: Seals,
    decisions: Mapping[str, bool],
    seal_key: bytes | None,
) -> Plan:
    for action in actions:
        if any(lead not in pending for lead in follows(action)):
            raise NotByUser
    run = Plan(
        head.store,
        head.store_format,
        head.store_fingerprint,
        head.profile,
        head.now,
        head.params,
        actions,
        head.health,
    )
    run.decisions = {a.id: decisions[a.id] for a in actions if a.id in decisions}
    sealed_by, by_action = seals
    mine = {a.id: by_action.pop(a.id) for a in actions if a.id in by_action}
    fitting.check(run, pending, (sealed_by, mine), seal_key)
    return run
