"""The conflict rule: pairs of one category that may contradict each other, offered as a
decision (the newer supersedes the older)."""

from __future__ import annotations

from memtui.engine.candidates import (
    Pair,
)
from memtui.engine.clashes import CLASH_WORDS, clash, clash_candidates_placed
from memtui.engine.lexical import vector_cosine
from memtui.engine.merging import retire
from memtui.engine.rules.run import Builder, Place, PlanRun, Step, live
from memtui.model import Status


def _conflicts(run: PlanRun) -> None:
    b, profile, pairs, now = run.b, run.profile, run.pairs, run.now
    if profile.conflict_low is None or profile.conflict_high is None:
        return
    per_entry: dict[str, int] = {}
    chosen = []
    # memtui's own: only two values of one attribute conflict (engine/clashes.py)
    by_value = profile.merge_rule == "memtui"
    # each pair with where it comes among every user's pairs (`Builder.keys`)
    placed = [(p, (0, -p.score, 0, b.place(p.a), b.place(p.b))) for p in pairs]
    if by_value:
        placed += [(p, (0, -p.score, 1, b.place(p.a), b.place(p.b))) for p in run.apart]
        placed.sort(key=lambda pk: -pk[0].score)
        placed = _clash_pairs(b, [pk for pk in placed if pk[0].score >= profile.conflict_low])
    proposed: set[frozenset[str]] = set()
    for p, key in placed:  # highest scores first
        if not by_value and not profile.conflict_low <= p.score < profile.conflict_high:
            continue
        if by_value:
            p = Pair(_successor(b, p.a), _successor(b, p.b), p.score)
            if p.a == p.b or frozenset((p.a, p.b)) in proposed:
                continue
        if not (live(b, p.a) and live(b, p.b)):
            continue
        a, c = b.current[p.a], b.current[p.b]
        if a.category != c.category or a.category not in profile.conflict_categories:
            continue
        how = clash(a.content, c.content) if by_value else None
        if by_value and how is None:
            continue
        older, newer = sorted((a, c), key=lambda m: (m.created_at or now, b.position[m.id]))
        if per_entry.get(newer.id, 0) >= profile.conflicts_per_entry:
            continue
        per_entry[newer.id] = per_entry.get(newer.id, 0) + 1
        proposed.add(frozenset((older.id, newer.id)))
        chosen.append((older, newer, p.score, how, key))
    for older, newer, score, how, key in chosen:
        if older.id in b.locked or newer.id in b.locked:
            continue
        [retired] = retire([older], newer.id, now, Status.SUPERSEDED)
        successor = newer.with_(supersedes=(*newer.supersedes, older.id), updated_at=now)
        if how is None:
            rule = f"{profile.method} in [{profile.conflict_low:g}, {profile.conflict_high:g})"
            why = "may contradict each other"
        else:
            rule = f"memtui ≥ {profile.conflict_low:g}, {how} differ"
            why = CLASH_WORDS[how]
        b.add(
            "conflict",
            [older.id, newer.id],
            [retired, successor],
            f"{rule}, same category ({older.category})",
            {"score": score},
            f"Two {older.category} entries {why} ({profile.method} {score:.2f}); if so the "
            "newer supersedes the older. Needs a decision.",
            needs_decision=True,
            order=key,
        )


def _clash_pairs(b: Builder, scored: list[tuple[Pair, Place]]) -> list[tuple[Pair, Place]]:
    """The candidate pairs at or above the conflict line, then the pairs that share what a
    clash needs although they score lower (`clash_candidates`), scored as the search does."""
    seen = {frozenset((p.a, p.b)) for p, _ in scored}
    position = {m.id: n for n, m in enumerate(b.eligible)}
    vectors = b.vectors
    more = []
    for (x, y), (opener, nth, n) in clash_candidates_placed(b.eligible):
        if frozenset((x, y)) in seen:
            continue
        score = 0.0
        if vectors is not None:
            score = vector_cosine(vectors[position[x]], vectors[position[y]])
        more.append((Pair(x, y, score), (1, -score, b.place(opener), nth, n)))
    more.sort(key=lambda pk: -pk[0].score)
    return [*scored, *more]


CONFLICTS = Step("conflicts", 0.9, _conflicts)


def _successor(b: Builder, ident: str) -> str:
    """The entry an earlier action merged or absorbed `ident` into (itself if none)."""
    seen = {ident}
    memory = b.current[ident]
    while memory.status is Status.MERGED and memory.superseded_by in b.current:
        ident = memory.superseded_by
        if ident in seen:
            break
        seen.add(ident)
        memory = b.current[ident]
    return ident
