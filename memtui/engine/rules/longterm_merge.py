"""The Go long-term system's rule: absorb duplicates above the absorb line, merge the
connected groups between the merge line and the line below it."""

from __future__ import annotations

import math
from collections.abc import Sequence

from memtui.engine.clusters import capped_components, clusters
from memtui.engine.merging import merge_entries
from memtui.engine.rules.run import (
    Builder,
    PlanRun,
    Scored,
    Step,
    absorbed,
    each_group,
    live,
    most_important,
    span,
)
from memtui.model import Memory


def _longterm_absorb_and_merge(run: PlanRun) -> None:
    b, profile, pairs, now = run.b, run.profile, run.pairs, run.now
    assert profile.absorb_threshold is not None and profile.merge_threshold is not None
    high = [(p.a, p.b, p.score) for p in pairs if p.score >= profile.absorb_threshold]
    for group, members, scores in each_group(b, capped_components(high, b.order, b.cap), high):
        b.add(
            "absorb",
            group,
            absorbed(most_important(b, members), members, now),
            f"{profile.method} ≥ {profile.absorb_threshold:g}",
            span(scores),
            f"{len(group)} duplicates ({_scored_by(profile.method, members)} "
            f"{max(scores):.2f}): the most important keeps its wording and takes in the others' "
            "tags, accesses and evidence.",
            order=(0, b.place(group[0])),
        )
    upper = profile.merge_below if profile.merge_below is not None else math.inf
    middle = [
        (p.a, p.b, p.score)
        for p in pairs
        if profile.merge_threshold <= p.score < upper and live(b, p.a) and live(b, p.b)
    ]
    for group, members, scores in each_group(b, _clusters(b, middle, profile.cluster_min), middle):
        merged, retired = merge_entries(
            members,
            new_id=b.new_id(group),
            now=now,
            rule="longterm",
            max_paths=10**6,
            max_tags=10**6,
        )
        b.add(
            "merge",
            group,
            [merged, *retired],
            f"{profile.method} in [{profile.merge_threshold:g}, {upper:g}): rule merge",
            {**span(scores), "size": len(group)},
            f"{len(group)} related entries ({_scored_by(profile.method, members)} up to "
            f"{max(scores):.2f}) become one: the more important wording first, the others "
            "joined with '；'.",
            order=(1, b.place(group[0])),
        )


LONGTERM_MERGE = Step("merge", 0.8, _longterm_absorb_and_merge)


def _scored_by(method: str, members: Sequence[Memory]) -> str:
    """What the scores of these members are: `tf-cosine` is the cosine of the entries' own
    embeddings when they all carry embeddings of one length (the Go system's rule)."""
    sizes = {len(m.embedding) if m.embedding else 0 for m in members}
    if method == "tf-cosine" and len(sizes) == 1 and 0 not in sizes:
        return "embedding cosine"
    return method


def _clusters(b: Builder, scored: Scored, min_size: int) -> list[list[str]]:
    """Connected groups of `min_size` up to the cap; larger ones are left out (pi, longterm)."""
    return clusters([(x, y) for x, y, _ in scored], b.order, min_size, b.cap)
