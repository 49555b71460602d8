"""The wholesale guard: a plan that would take more than a fifth of one user's active entries
out of use (archive, expire, deprecate, or decay below the profile's archive line) approves
none of those actions by itself. Each of them needs a decision, and the plan says so first.

The planner holds them as its last step. A plan file's bulk rows record them as their rule made
them (`unheld`), and a plan read from a file is held again against the store it is applied to
(`planfile.checks.check_fits`): what is held follows from the plan and the store, so a file edited
to pre-approve them does not get them applied without a person's decision.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from memtui.engine.choices import EXPIRE_KINDS
from memtui.engine.plan import Action
from memtui.model import Memory, Status

SHARE = 0.2
"""More than this share of one user's active entries going at once needs a decision."""
HELD = "Held for review: "
"""How a held action's reason starts (then the plan's line for its user)."""
_HELD_END = ", more than a fifth. "
HELD_KEY = "wholesale"
"""The details key of an action the guard holds (`held`)."""
_VERBS = {Status.ARCHIVED: "archive", Status.DELETED: "delete", Status.DEPRECATED: "deprecate"}


@dataclass(frozen=True, slots=True)
class Wholesale:
    """One user's entries that a plan would take out of use, when there are too many."""

    user: str | None
    going: dict[str, str]
    """Entry id → what happens to it, to be formatted with a count (`archive {n}`, …)."""
    active: int
    only_user: bool

    def line(self) -> str:
        """The plan's line for this user (said first)."""
        return f"{self.what()}: review before approving"

    def what(self) -> str:
        """What would happen ("would archive 405 of 510 entries (79 %) of user X")."""
        counts = Counter(self.going.values()).most_common()
        verbs = " and ".join(verb.format(n=n) for verb, n in counts)
        share = 100 * len(self.going) / self.active
        if self.user is not None:
            who = f"of user {self.user}"
        else:
            who = "of the store" if self.only_user else "without a user"
        return f"would {verbs} of {self.active} entries ({share:.0f} %) {who}"


def _going(action: Action, archive_line: float | None) -> str | None:
    """What the action does to an active entry it takes out of use, or None."""
    if len(action.before) != 1 or len(action.after) != 1:
        return None
    [was], [now] = action.before, action.after
    if was.status is not Status.ACTIVE:
        return None
    if action.kind in EXPIRE_KINDS and now.status is not Status.ACTIVE:
        return _VERBS.get(now.status, action.kind) + " {n}"
    if (
        archive_line is not None
        and now.status is Status.ACTIVE
        and now.importance < archive_line <= was.importance
    ):
        return f"decay {{n}} below {archive_line:g}"
    return None


ActiveCounts = Mapping[str | None, int]
"""Each user's active entries, the users in the order of the store (of their first one)."""


def active_counts(memories: Iterable[Memory]) -> ActiveCounts:
    active: Counter[str | None] = Counter()
    for m in memories:
        if m.status is Status.ACTIVE:
            active[m.user_id] += 1
    return active


def wholesale(
    actions: Sequence[Action],
    memories: Iterable[Memory] | ActiveCounts,
    archive_line: float | None,
    only_user: bool | None = None,
) -> list[Wholesale]:
    """The users of whom the actions would take more than `SHARE` of the active entries out
    of use, in the order of the store. `memories`: the entries, or each user's active ones
    counted (`active_counts`). `only_user`: whether the store has one user with active
    entries (default: whether `memories` has; given when they are one user's of a store)."""
    active = memories if isinstance(memories, Mapping) else active_counts(memories)
    going: dict[str | None, dict[str, str]] = {}
    for action in actions:
        verb = _going(action, archive_line)
        if verb is not None:
            was = action.before[0]
            going.setdefault(was.user_id, {})[was.id] = verb
    only = len(active) <= 1 if only_user is None else only_user
    return [
        Wholesale(user, going[user], total, only)
        for user, total in active.items()
        if user in going and len(going[user]) > SHARE * total
    ]


def hold_wholesale(
    actions: Sequence[Action],
    memories: Iterable[Memory] | ActiveCounts,
    archive_line: float | None,
    only_user: bool | None = None,
) -> list[str]:
    """Mark the actions of each user who crosses the line as needing a decision, saying why;
    the plan's lines, one per such user. Holding again changes nothing."""
    found = wholesale(actions, memories, archive_line, only_user)
    held = {ident: w for w in found for ident in w.going}
    for action in actions:
        w = held.get(action.before[0].id) if len(action.before) == 1 else None
        if w is None or action.needs_decision or _going(action, archive_line) is None:
            continue  # an action that already waits says why itself
        action.needs_decision = True
        action.details = {**action.details, HELD_KEY: True}
        if not action.reason.startswith(HELD):
            action.reason = f"{HELD}the plan {w.what()}{_HELD_END}{action.reason}"
    return [w.line() for w in found]


def held(action: Action) -> bool:
    """Whether the wholesale guard holds this action (it would apply without it)."""
    return action.details.get(HELD_KEY) is True


def unheld(action: Action) -> Action:
    """The action as its rule made it, before the guard held it (a plan file's bulk rows hold
    it so: the guard holds it again against the store it is applied to)."""
    if not held(action):
        return action
    details = {k: v for k, v in action.details.items() if k != HELD_KEY}
    reason = action.reason
    if reason.startswith(HELD) and _HELD_END in reason:
        reason = reason.split(_HELD_END, 1)[1]
    return dataclasses.replace(action, needs_decision=False, details=details, reason=reason)


def with_lines(known: Sequence[str], more: Sequence[str]) -> list[str]:
    """`known` and then the lines of `more` it does not hold."""
    return [*known, *(line for line in more if line not in known)]
