"""The consolidation set (tests/fixtures/consolidation): user stores labelled with the entries
a careful curator keeps, and pairwise scores of a plan against them.

Two nested partitions per user: `entry` (one curated entry) and `memory` (the same memory).
A pair of one user's facts is tier "same" (one memory), tier "subject" (one entry, two
memories) or "different". A plan "joins" two facts when one chain of its pre-approved merge
and absorb actions takes both in; the action that first joins them gives the pair its
proposed tier ("subject" when its details say so, else "same").
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import combinations
from pathlib import Path

from memtui.engine.plan import Plan
from memtui.model import Memory

SET = Path(__file__).resolve().parent / "fixtures" / "consolidation"
TIERS = ("same", "subject")
HARD_KINDS = ("other-subject", "other-person", "other-episode", "contradiction")


@dataclass(frozen=True, slots=True)
class Fact:
    id: str
    user: str
    lang: str
    split: str
    day: str
    text: str
    entry: str
    memory: str


@dataclass(frozen=True, slots=True)
class HardPair:
    a: str
    b: str
    kind: str


def _lines(path: Path) -> Iterable[dict[str, str]]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            yield json.loads(line)


def load_facts(folder: Path = SET) -> list[Fact]:
    return [
        Fact(
            r["id"], r["user"], r["lang"], r["split"], r["day"], r["text"], r["entry"], r["memory"]
        )
        for path in sorted(folder.glob("*.jsonl"))
        if not path.name.endswith(".pairs.jsonl")
        for r in _lines(path)
    ]


def load_hard_pairs(folder: Path = SET) -> list[HardPair]:
    return [
        HardPair(r["a"], r["b"], r["kind"])
        for path in sorted(folder.glob("*.pairs.jsonl"))
        for r in _lines(path)
    ]


def by_user(facts: Iterable[Fact]) -> dict[str, list[Fact]]:
    out: dict[str, list[Fact]] = defaultdict(list)
    for f in facts:
        out[f.user].append(f)
    return dict(out)


def as_memories(facts: Sequence[Fact]) -> list[Memory]:
    """One user's facts as an agent's store: written at noon of their day (a second apart, in
    order), never used, of the extractor's usual importance."""
    out = []
    for n, f in enumerate(facts):
        when = datetime.fromisoformat(f.day).replace(hour=12, tzinfo=UTC) + timedelta(seconds=n)
        out.append(Memory(id=f.id, content=f.text, importance=0.5, user_id=f.user, created_at=when))
    return out


def plan_time(facts: Sequence[Fact]) -> datetime:
    """The day after the store's last fact: the moment its curator reads it."""
    last = max(datetime.fromisoformat(f.day) for f in facts)
    return last.replace(tzinfo=UTC) + timedelta(days=1)


def gold_tier(a: Fact, b: Fact) -> str:
    if a.memory == b.memory:
        return "same"
    return "subject" if a.entry == b.entry else "different"


def action_tier(action: object) -> str:
    details = getattr(action, "details", None) or {}
    return "subject" if details.get("tier") == "subject" else "same"


def joined_pairs(plan: Plan) -> dict[frozenset[str], str]:
    """Each pair of entries a plan's pre-approved merges and absorbs put in one entry, with
    the tier of the action that first joined them."""
    return _joined(plan)[0]


def _joined(plan: Plan) -> tuple[dict[frozenset[str], str], dict[str, set[str]]]:
    """`joined_pairs`, and each entry's members (an entry a merge made: the ones it took in)."""
    members: dict[str, set[str]] = {}
    joined: dict[frozenset[str], str] = {}
    for action in plan.actions:
        if action.kind not in ("merge", "absorb") or action.needs_decision:
            continue
        tier = action_tier(action)
        group: set[str] = set()
        for ident in (m.id for m in action.before):
            group |= members.get(ident, {ident})
        for a, b in combinations(sorted(group), 2):
            joined.setdefault(frozenset((a, b)), tier)
        for ident in group:
            members[ident] = group
        for m in action.after:
            members.setdefault(m.id, group)
    return joined, members


@dataclass(slots=True)
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def add(self, other: Counts) -> None:
        self.tp, self.fp, self.fn = self.tp + other.tp, self.fp + other.fp, self.fn + other.fn

    def row(self) -> str:
        return f"P {self.precision:5.3f}  R {self.recall:5.3f}  F1 {self.f1:5.3f}"


@dataclass(slots=True)
class Score:
    """Pairwise counts overall and per gold tier (recall) and per proposed tier (precision),
    the hard negatives wrongly joined, and the conflicts proposed."""

    overall: Counts = field(default_factory=Counts)
    recall_by_tier: dict[str, Counts] = field(default_factory=lambda: {t: Counts() for t in TIERS})
    precision_by_tier: dict[str, Counts] = field(
        default_factory=lambda: {t: Counts() for t in TIERS}
    )
    hard_joined: dict[str, list[int]] = field(
        default_factory=lambda: {k: [0, 0] for k in HARD_KINDS}
    )
    conflicts: Counts = field(default_factory=Counts)
    merges: int = 0

    def add(self, other: Score) -> None:
        self.overall.add(other.overall)
        for t in TIERS:
            self.recall_by_tier[t].add(other.recall_by_tier[t])
            self.precision_by_tier[t].add(other.precision_by_tier[t])
        for k in HARD_KINDS:
            self.hard_joined[k][0] += other.hard_joined[k][0]
            self.hard_joined[k][1] += other.hard_joined[k][1]
        self.conflicts.add(other.conflicts)
        self.merges += other.merges


def score_plan(facts: Sequence[Fact], plan: Plan, hard: Sequence[HardPair]) -> Score:
    """How one user's plan compares with the labels."""
    joined, members = _joined(plan)
    out = Score()
    out.merges = sum(a.kind in ("merge", "absorb") and not a.needs_decision for a in plan.actions)
    for a, b in combinations(facts, 2):
        gold = gold_tier(a, b)
        said = joined.get(frozenset((a.id, b.id)))
        if gold != "different":
            out.recall_by_tier[gold].tp += said is not None
            out.recall_by_tier[gold].fn += said is None
        if said is not None:
            out.precision_by_tier[said].tp += gold != "different"
            out.precision_by_tier[said].fp += gold == "different"
        out.overall.tp += said is not None and gold != "different"
        out.overall.fp += said is not None and gold == "different"
        out.overall.fn += said is None and gold != "different"
    ids = {f.id for f in facts}
    contradictions = set()
    for p in hard:
        if p.a in ids and p.b in ids:
            pair = frozenset((p.a, p.b))
            out.hard_joined[p.kind][0] += pair in joined
            out.hard_joined[p.kind][1] += 1
            if p.kind == "contradiction":
                contradictions.add(pair)
    # a conflict with an entry a merge made stands for its members
    found: set[frozenset[str]] = set()
    for action in plan.actions:
        if action.kind != "conflict" or len(action.before) != 2:
            continue
        a, b = (members.get(m.id, {m.id}) for m in action.before)
        hits = {frozenset((x, y)) for x in a for y in b} & contradictions
        out.conflicts.tp += bool(hits)
        out.conflicts.fp += not hits
        found |= hits
    out.conflicts.fn = len(contradictions - found)
    return out


PlanFor = Callable[[list[Memory], datetime], Plan]


def score_set(
    facts: Sequence[Fact], hard: Sequence[HardPair], plan_for: PlanFor
) -> dict[str, Score]:
    """Scores per language and "all": each user's store planned on its own."""
    out: dict[str, Score] = defaultdict(Score)
    for members in by_user(facts).values():
        score = score_plan(members, plan_for(as_memories(members), plan_time(members)), hard)
        out[members[0].lang].add(score)
        out["all"].add(score)
    return dict(out)
