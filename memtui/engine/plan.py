"""A plan: proposed actions, each reviewable on its own, as data (JSON) and as the store
changes an approved subset amounts to."""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memtui.engine.kinds import KINDS
from memtui.errors import MemtuiError
from memtui.model import MEMORY_FIELDS, Memory, memory_values
from memtui.times import format_iso
from memtui.times import format_iso_cached as _iso

PLAN_FORMAT = "memtui-plan"
PLAN_VERSION = 1
"""The full form (`Plan.to_dict`): a whole record before and after each action. Plan files are
written in version 2 (`memtui.planfile.compact`); both are read (`memtui.planfile`)."""


@dataclass(slots=True)
class Action:
    id: str
    kind: str
    targets: list[str]
    """Ids of the entries it changes or creates."""
    before: list[Memory]
    """The existing targets as the action finds them (after the actions it depends on)."""
    after: list[Memory]
    """The targets as the action leaves them (including entries it creates)."""
    rule: str
    scores: dict[str, float]
    reason: str
    depends_on: list[str] = field(default_factory=list)
    needs_decision: bool = False
    """Not approved unless a person (or the LLM) decides: conflicts, failed model calls."""
    actor: str = "plan"
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, record: Callable[[Memory], dict[str, Any]] | None = None) -> dict[str, Any]:
        record = record or plan_record
        return {
            **self.head(),
            "before": [record(m) for m in self.before],
            "after": [record(m) for m in self.after],
            **self.tail(),
        }

    def head(self) -> dict[str, Any]:
        """The fields a file holds before the records."""
        return {"id": self.id, "kind": self.kind, "targets": self.targets}

    def tail(self) -> dict[str, Any]:
        """The fields a file holds after the records."""
        return {
            "rule": self.rule,
            "scores": self.scores,
            "reason": self.reason,
            "depends_on": self.depends_on,
            "needs_decision": self.needs_decision,
            "actor": self.actor,
            "details": self.details,
        }


@dataclass(slots=True)
class Plan:
    store: str
    store_format: str
    store_fingerprint: str
    profile: str
    now: datetime
    params: dict[str, Any]
    actions: list[Action]
    health: dict[str, Any] = field(default_factory=dict)
    decisions: dict[str, bool] = field(default_factory=dict, repr=False, compare=False)
    """A person's approvals (True) and rejections (False) that differ from the default, kept
    with a saved plan."""
    warnings: list[str] = field(default_factory=list)
    """What a person must know before approving, said first (engine/wholesale.py)."""
    _index: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    @property
    def summary(self) -> dict[str, int]:
        counts = Counter(a.kind for a in self.actions)
        return {kind: counts[kind] for kind in KINDS if counts[kind]}

    def default_approved(self) -> list[str]:
        """Every action but those that need a decision or that a person rejected (unless a
        person approved them: `decisions`), what depends on them, and what applies only after
        one of them (`follows`) when none is left."""
        decided = self.decisions
        held = [a.id for a in self.actions if not decided.get(a.id, not a.needs_decision)]
        waiting = closure(self, held, upward=False)
        kept = settle(self, {a.id for a in self.actions} - waiting)
        return [a.id for a in self.actions if a.id in kept]

    def decide(self, approved: set[str]) -> None:
        """Keep a person's choice of approved actions with the plan (`decisions`)."""
        self.decisions = {
            a.id: a.id in approved
            for a in self.actions
            if (a.id in approved) != (not a.needs_decision)
        }

    def release(self) -> None:
        """Let the actions go: the plan's user is done with them (apply commits their
        changes, which hold the records)."""
        self.actions = []
        self._index = {}

    def action(self, action_id: str) -> Action:
        """The action with this id, in O(1) (the index is rebuilt whenever `actions` was
        changed under it)."""
        position = self._index.get(action_id)
        actions = self.actions
        if position is None or position >= len(actions) or actions[position].id != action_id:
            self._index = {a.id: n for n, a in enumerate(actions)}
            position = self._index.get(action_id)
            if position is None:
                raise MemtuiError(f"the plan has no action {action_id!r}")
        return actions[position]

    def to_dict(self) -> dict[str, Any]:
        return self.file_fields([a.to_dict(_memo(plan_record)) for a in self.actions])

    def file_fields(self, actions: list[Any], version: int = PLAN_VERSION) -> dict[str, Any]:
        """The plan file's fields around `actions` (as a file of `version` holds them): what
        comes before the actions is known before planning, what comes after them once every
        user is planned (a streamed plan writes its actions as they come)."""
        out = {
            "format": PLAN_FORMAT,
            "version": version,
            "store": self.store,
            "store_format": self.store_format,
            "store_fingerprint": self.store_fingerprint,
            "profile": self.profile,
            "now": format_iso(self.now),
            "params": self.params,
            "actions": actions,
            **({"warnings": list(self.warnings)} if self.warnings else {}),
            "summary": self.summary,
        }
        if self.health:
            out["health"] = self.health
        return out


def plan_record(m: Memory) -> dict[str, Any]:
    """A record in a plan: the native store's form (`NativeFormat.encode`: `to_dict` without the
    fields at None, False, [] or {}), built directly (a big plan holds 300k of them)."""
    out: dict[str, Any] = {}
    if m.id is not None:
        out["id"] = m.id
    if m.content is not None:
        out["content"] = m.content
    if m.category is not None:
        out["category"] = m.category
    if m.importance is not None:
        out["importance"] = m.importance
    out["source"] = m.source.value
    if m.tags:
        out["tags"] = list(m.tags)
    if m.paths:
        out["paths"] = list(m.paths)
    if m.created_at is not None:
        out["created_at"] = _iso(m.created_at)
    if m.last_accessed_at is not None:
        out["last_accessed_at"] = _iso(m.last_accessed_at)
    if m.last_decayed_at is not None:
        out["last_decayed_at"] = _iso(m.last_decayed_at)
    if m.updated_at is not None:
        out["updated_at"] = _iso(m.updated_at)
    if m.access_count is not None and m.access_count is not False:
        out["access_count"] = m.access_count
    if m.evidence_count is not None and m.evidence_count is not False:
        out["evidence_count"] = m.evidence_count
    if m.tenured is not None and m.tenured is not False:
        out["tenured"] = m.tenured
    if m.user_id is not None:
        out["user_id"] = m.user_id
    out["status"] = m.status.value
    if m.supersedes:
        out["supersedes"] = list(m.supersedes)
    if m.superseded_by is not None:
        out["superseded_by"] = m.superseded_by
    if m.superseded_at is not None:
        out["superseded_at"] = _iso(m.superseded_at)
    if m.embedding:
        out["embedding"] = list(m.embedding)
    if m.version is not None and m.version is not False:
        out["version"] = m.version
    if m.extra:
        out["extra"] = m.extra
    return out


def _listed(value: Any) -> Any:
    return None if value is None else list(value)


def _plain(value: Any) -> Any:
    return value


_TIMES = ("created_at", "last_accessed_at", "last_decayed_at", "updated_at", "superseded_at")
_SEQUENCES = ("tags", "paths", "supersedes", "embedding")
AS_JSON: dict[str, Callable[[Any], Any]] = {
    name: format_iso if name in _TIMES else _listed if name in _SEQUENCES else _plain
    for name in MEMORY_FIELDS
}
"""Each field as `Memory.to_dict` writes it."""
AS_JSON["source"] = AS_JSON["status"] = operator.attrgetter("value")


def field_changes(was: Memory, now: Memory) -> dict[str, list[Any]]:
    """{field: [before, after]} in `to_dict` form, for the fields whose form differs (the
    same as comparing the two `to_dict`s, without building them)."""
    diff: dict[str, list[Any]] = {}
    for name, a, b in zip(MEMORY_FIELDS, memory_values(was), memory_values(now), strict=True):
        if a is b and type(a) is not float:
            continue
        convert = AS_JSON[name]
        ja, jb = convert(a), convert(b)
        if ja != jb:
            diff[name] = [ja, jb]
    return diff


def _memo(
    make: Callable[[Memory], dict[str, Any]],
) -> Callable[[Memory], dict[str, Any]]:
    """`make`, once per record object: a plan repeats records (one action's after is the next
    one's before), and serialising 100k of them is most of writing a big plan."""
    seen: dict[int, tuple[Memory, dict[str, Any]]] = {}

    def record(memory: Memory) -> dict[str, Any]:
        hit = seen.get(id(memory))
        if hit is None:
            hit = seen[id(memory)] = (memory, make(memory))
        return hit[1]

    return record


def dependents(plan: Plan) -> dict[str, list[str]]:
    """Action id → the actions that depend on it directly."""
    out: dict[str, list[str]] = {a.id: [] for a in plan.actions}
    for action in plan.actions:
        for dep in action.depends_on:
            out.setdefault(dep, []).append(action.id)
    return out


def closure(
    plan: Plan, chosen: Iterable[str], *, upward: bool, approved: Iterable[str] | None = None
) -> set[str]:
    """`chosen` plus what they depend on (upward) or what depends on them (downward).

    Rejecting (downward) from the set `approved`: also the approved actions that apply only
    after one of several actions (`follows`) when rejecting leaves none of those. Approving
    never brings back an action `follows` names: applying refuses such an action alone.
    """
    links = {a.id: a.depends_on for a in plan.actions} if upward else dependents(plan)
    seen: set[str] = set()
    stack = list(chosen)
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        stack.extend(links.get(current, []))
    if not upward and approved is not None:
        left = set(approved) - seen
        seen |= left - settle(plan, left)
    return seen


# an action's details key: the actions of which at least one must apply for it to apply
FOLLOWS = "after_merges"


def follows(action: Action) -> list[str]:
    """The actions of which at least one must be applied for `action` to apply (pi folds
    duplicates only after one of its merges); empty when it applies on its own."""
    leads = action.details.get(FOLLOWS)
    return [str(a) for a in leads] if isinstance(leads, list) else []


def settle(plan: Plan, approved: set[str]) -> set[str]:
    """`approved` without the actions that cannot apply with it: those none of whose
    `follows` is approved, and what depends on them."""
    kept = set(approved)
    while True:
        stranded = [
            a.id
            for a in plan.actions
            if a.id in kept and (leads := follows(a)) and not kept.intersection(leads)
        ]
        if not stranded:
            return kept
        kept -= closure(plan, stranded, upward=False)


@dataclass(frozen=True, slots=True)
class PlannedChange:
    """What applying approved actions does to one entry (`before` None: a new entry)."""

    before: Memory | None
    after: Memory


def plan_changes(plan: Plan, approved: Sequence[str]) -> list[PlannedChange]:
    """The net change per entry of the approved actions, in plan order.

    An action needs the actions it depends on: approving one without them is refused.
    """
    chosen = set(approved)
    unknown = chosen - {a.id for a in plan.actions}
    if unknown:
        raise MemtuiError(f"the plan has no action {sorted(unknown)[0]!r}")
    for action in plan.actions:
        if action.id in chosen:
            missing = [d for d in action.depends_on if d not in chosen]
            if missing:
                raise MemtuiError(
                    f"action {action.id} ({action.kind}) depends on {', '.join(missing)}, "
                    "which is not approved"
                )
            leads = follows(action)
            if leads and not chosen.intersection(leads):
                raise MemtuiError(
                    f"action {action.id} ({action.kind}) applies only after one of "
                    f"{', '.join(leads)}, and none of them is approved"
                )
    first: dict[str, Memory | None] = {}
    last: dict[str, Memory] = {}
    for action in plan.actions:
        if action.id not in chosen:
            continue
        before = {m.id: m for m in action.before}
        for memory in action.after:
            if memory.id not in first:
                first[memory.id] = before.get(memory.id)
            last[memory.id] = memory
    return [PlannedChange(first[i], last[i]) for i in last if first[i] != last[i]]
