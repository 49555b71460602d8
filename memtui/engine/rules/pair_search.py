"""The candidate search: the pairs of eligible entries at or above the lowest line the
profile's rules look at (`PlanRun.line`), as `Pair`s or as arrays."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from memtui.engine.candidates import (
    Pair,
    PairTable,
    candidate_pairs,
    candidate_table,
    memtui_vectors,
)
from memtui.engine.clashes import clash
from memtui.engine.profiles import Profile
from memtui.engine.rules.run import Builder, PlanRun, Step, subject_tier_on
from memtui.model import Memory, Source

_Found = TypeVar("_Found", list[Pair], PairTable)


def _candidates(run: PlanRun) -> None:
    subject = run.profile.subject_threshold
    line = run.line
    if subject is None or not subject_tier_on(run.profile) or subject >= line:
        run.pairs = _search(run, candidate_pairs, line)
        return
    # one search down to the subject line; the other rules see the pairs at their own lines
    found = run.found = _search(run, candidate_table, subject)
    keep = found.score >= line
    run.pairs = PairTable(found.memories, found.a[keep], found.b[keep], found.score[keep]).pairs()


def _candidates_apart(run: PlanRun) -> None:
    """The candidate pairs, less those at the merge line that clash ("likes tea" / "doesn't
    like tea" score as one memory): no merge joins them, the conflict step sees them."""
    _candidates(run)
    line = run.profile.merge_threshold
    if line is None:
        return
    current = run.b.current
    kept = []
    for p in run.pairs:
        if p.score >= line and clash(current[p.a].content, current[p.b].content):
            run.apart.append(p)
            run.b.clashing.append((p.a, p.b))
        else:
            kept.append(p)
    run.pairs = kept


def _candidate_arrays(run: PlanRun) -> None:
    run.found = _search(run, candidate_table, run.line)


def _search(run: PlanRun, search: Callable[..., _Found], line: float) -> _Found:
    b, profile = run.b, run.profile
    b.eligible = _eligible(b, profile)
    if profile.method == "memtui":
        b.vectors = memtui_vectors(b.eligible)
    return search(
        b.eligible,
        profile.method,
        line,
        progress=lambda done, total: run.report("candidates", 0.1 + 0.7 * done / max(1, total)),
        embeddings=b.embeddings,
        vectors=b.vectors,
    )


CANDIDATES = Step("candidates", 0.1, _candidates)
# memtui's rule: the clashing pairs kept apart from the merges
CANDIDATES_APART = Step("candidates", 0.1, _candidates_apart)
# pi's rule: the pairs as arrays
CANDIDATE_ARRAYS = Step("candidates", 0.1, _candidate_arrays)


def _eligible(b: Builder, profile: Profile) -> list[Memory]:
    return [
        m
        for m in b.active()
        if (m.tenured or m.importance >= profile.min_importance)
        and not (profile.exclude_user_source and m.source is Source.USER)
    ]
