"""What every rule's steps share: the builder of the plan's actions (`Builder`, the entries as
the earlier steps left them), the state of one run (`PlanRun`), the `Step` a rule declares, and
the helpers more than one rule uses."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memtui.engine.candidates import (
    Pair,
    PairTable,
)
from memtui.engine.decay import DecayModel
from memtui.engine.embedded import (
    Embeddings,
)
from memtui.engine.ids import IdMaker, TakenIds
from memtui.engine.kinds import kind_of
from memtui.engine.lexical import Vector
from memtui.engine.merging import absorb_entries
from memtui.engine.plan import Action
from memtui.engine.profiles import Profile
from memtui.errors import MemtuiError
from memtui.model import Memory, Status
from memtui.traits import IdStyle

Progress = Callable[[str, float], None]
Place = tuple[Any, ...]
"""A sort key: tuples of numbers and of such tuples."""


MergedText = Callable[[Sequence[Memory]], str | None]


class Builder:
    """The plan's actions as the steps add them, and the entries as the actions leave them."""

    def __init__(
        self,
        memories: Sequence[Memory],
        ids: IdStyle,
        now: datetime,
        cap: int,
        *,
        taken: TakenIds | None = None,
        origin: Mapping[str, int] | None = None,
    ) -> None:
        """`taken` and `origin` when `memories` are one user's: the whole store's ids (new
        ids avoid them) and each entry's place in the store (the actions' `keys` use it)."""
        self.cap = cap
        self.eligible: list[Memory] = []
        self.current: dict[str, Memory] = {m.id: m for m in memories}
        self.order = [m.id for m in memories]
        self.position = {ident: n for n, ident in enumerate(self.order)}
        self.actions: list[Action] = []
        self.last_touch: dict[str, str] = {}
        self.locked: set[str] = set()
        self.ids = IdMaker(ids, self.current, now, index=taken)
        self.origin: Mapping[str, int] = self.position if origin is None else origin
        self.born: dict[str, Place] = {}  # where each entry an action made stands
        self.step = 0  # the index of the running step in the profile's steps
        self.seeds: list[tuple[int, str, tuple[str, ...]]] = []
        """Each new id: the action it is for, the id, the members it was drawn from."""
        self.keys: list[Place] = []
        """Per action, where a whole-store plan puts it: per-user plans merge by these."""
        self.embeddings: Embeddings | None = None
        self.numbers: dict[str, frozenset[str]] | None = None  # what each eligible entry states
        self.vectors: list[Vector] | None = None  # the eligible entries' memtui vectors
        self.clashing: list[tuple[str, str]] = []  # pairs that clash: never in one group

    def add(
        self,
        kind: str,
        before_ids: Sequence[str],
        after: Sequence[Memory],
        rule: str,
        scores: dict[str, float],
        reason: str,
        *,
        needs_decision: bool = False,
        details: dict[str, Any] | None = None,
        order: Place = (),
    ) -> Action:
        """`order`: where the rule's own order puts this action among the step's actions of
        every user (the step's index comes first)."""
        if kind_of(kind).capped and len(before_ids) > self.cap:
            raise MemtuiError(
                f"a {kind} of {len(before_ids)} entries is over the profile's cap of {self.cap}"
            )
        if len(before_ids) == 1 and len(after) == 1 and after[0].id == before_ids[0]:
            targets = [before_ids[0]]  # one entry changed in place (decay, expiry): most actions
            last = self.last_touch.get(targets[0])
            deps = [] if last is None else [last]
        else:
            targets = list(dict.fromkeys([*before_ids, *(m.id for m in after)]))
            deps = list(dict.fromkeys(self.last_touch[t] for t in targets if t in self.last_touch))
            deps.sort(key=lambda a: int(a[1:]))
        action = Action(
            id=f"a{len(self.actions) + 1}",
            kind=kind,
            targets=targets,
            before=[self.current[i] for i in before_ids],
            after=list(after),
            rule=rule,
            scores={k: round(v, 6) for k, v in scores.items()},
            reason=reason,
            depends_on=deps,
            needs_decision=needs_decision,
            details=details or {},
        )
        self.actions.append(action)
        key = (self.step, *order)
        self.keys.append(key)
        for ident in targets:
            self.last_touch[ident] = action.id
        if needs_decision:
            self.locked.update(targets)  # a proposal: later steps leave these entries alone
        else:
            for n, memory in enumerate(after):
                if memory.id not in self.current:
                    self.born[memory.id] = (1, key, n)
                    self.position[memory.id] = len(self.order)
                    self.order.append(memory.id)
                self.current[memory.id] = memory
        return action

    def new_id(self, members: Sequence[str]) -> str:
        """A new id for the entry that `members` become in the next action."""
        ident = self.ids.new("|".join(members))
        self.seeds.append((len(self.actions), ident, tuple(members)))
        return ident

    def place(self, ident: str) -> Place:
        """Where an entry stands in the whole store's order: the snapshot's entries first,
        then the ones actions made, in the order of those actions."""
        born = self.born.get(ident)
        return born if born is not None else (0, self.origin[ident])

    def active(self) -> list[Memory]:
        return [self.current[i] for i in self.order if self.current[i].status is Status.ACTIVE]


@dataclass(slots=True)
class PlanRun:
    """What the steps of one plan share: the entries as the earlier steps left them, the
    candidate pairs once found, and the options of the call."""

    b: Builder
    profile: Profile
    now: datetime
    snapshot: Sequence[Memory]
    decay: DecayModel | None
    """The profile's decay model, also for the steps that only weigh with it (thesearch)."""
    session: str
    merged_text: MergedText | None
    last_run: datetime | None
    report: Progress
    line: float = 0.0
    """The lowest score any of the profile's pair rules looks at (rules/table.py)."""
    protected: frozenset[str] | None = None
    """The entries the expiry rule never touches, when found over the whole store already."""
    found: PairTable | None = None
    """The candidate pairs as arrays, where the rule needs no `Pair`s (pi)."""
    _pairs: list[Pair] | None = None
    health: dict[str, object] | None = None
    warnings: list[str] = dataclasses.field(default_factory=list)
    apart: list[Pair] = dataclasses.field(default_factory=list)
    """Candidate pairs kept out of merges because they clash (engine/clashes.py)."""

    @property
    def pairs(self) -> list[Pair]:
        """The candidate pairs, highest score first (built from `found` on first use)."""
        if self._pairs is None:
            self._pairs = self.found.pairs() if self.found is not None else []
        return self._pairs

    @pairs.setter
    def pairs(self, pairs: list[Pair]) -> None:
        self._pairs = pairs


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a profile's pipeline: its name and start as progress, and what it does."""

    name: str
    start: float
    run: Callable[[PlanRun], None]
    store_wide: bool = False
    """Whether it looks at the whole store and every action (the wholesale guard, health):
    planned user by user, it runs once over the joined plan (engine/planner.py)."""


@dataclass(frozen=True, slots=True)
class RuleSteps:
    """What a merge rule brings to a profile's steps."""

    merge: Step
    candidates: Step | None = None
    """The rule's own candidate search (default: `CANDIDATES`, a list of `Pair`s)."""
    floor: Callable[[Profile], float] | None = None
    """A score line of the rule's own below which the candidate search need not look."""
    conflicts: bool = True
    """Whether the profile's conflict line applies (thesearch finds none: it deprecates)."""
    finish: tuple[Step, ...] = ()
    per_user: bool = True
    """Whether each user's plan is the rule's own (pi's dedupe folds across the store: no)."""


def subject_tier_on(profile: Profile) -> bool:
    """The subject tier runs with the memtui rule on memtui's own scores, where its line was
    measured."""
    return (
        profile.subject_threshold is not None
        and profile.merge_rule == "memtui"
        and profile.method == "memtui"
    )


def _group_scores(
    groups: Sequence[Sequence[str]], scored: Iterable[tuple[str, str, float]]
) -> list[list[float]]:
    """The scores of the pairs inside each group (one pass over the pairs)."""
    where = {ident: n for n, group in enumerate(groups) for ident in group}
    out: list[list[float]] = [[] for _ in groups]
    for x, y, score in scored:
        gx = where.get(x)
        if gx is not None and gx == where.get(y):
            out[gx].append(score)
    return out


Scored = list[tuple[str, str, float]]


def each_group(
    b: Builder, groups: list[list[str]], scored: Scored
) -> Iterator[tuple[list[str], list[Memory], list[float]]]:
    """Each group with its members as the earlier actions left them and its pairs' scores."""
    for group, scores in zip(groups, _group_scores(groups, scored), strict=True):
        yield group, [b.current[i] for i in group], scores


def absorbed(
    survivor: Memory,
    members: Sequence[Memory],
    now: datetime,
    *,
    boost: float = 0.0,
    max_paths: int = 10**6,
    max_tags: int = 10**6,
) -> list[Memory]:
    """The survivor having taken in the other members, then the others, retired into it."""
    others = [m for m in members if m is not survivor]
    kept, retired = absorb_entries(
        survivor, others, now=now, boost=boost, max_paths=max_paths, max_tags=max_tags
    )
    return [kept, *retired]


def live(b: Builder, ident: str) -> bool:
    return b.current[ident].status is Status.ACTIVE and ident not in b.locked


def span(scores: list[float]) -> dict[str, float]:
    return {"min_score": min(scores), "max_score": max(scores)}


def most_important(b: Builder, members: Sequence[Memory]) -> Memory:
    return max(members, key=lambda m: (m.importance, -b.position[m.id]))
