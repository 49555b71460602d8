"""pi's merge rule: union-find clusters over pi's similarity, merged as pi's model (or the
best member) words them; the opt-in absorb of near-identical pairs; then pi's dedupe."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np

from memtui.engine.candidates import (
    Pair,
)
from memtui.engine.clusters import capped_components, pair_clusters
from memtui.engine.merging import best_member, merge_entries
from memtui.engine.pi_dedupe import pi_answer
from memtui.engine.profiles import Profile
from memtui.engine.rules.pi_dedupe_fold import pi_dedupe
from memtui.engine.rules.run import Builder, PlanRun, Step, absorbed, each_group, span
from memtui.model import SOURCE_PRIORITY, Memory, Source


def _pi_absorb_and_merge(run: PlanRun) -> None:
    b, profile, found, now = run.b, run.profile, run.found, run.now
    merged_text = run.merged_text
    assert profile.merge_threshold is not None and found is not None
    position = np.fromiter(
        (b.position[m.id] for m in found.memories), dtype=np.int64, count=len(found.memories)
    )
    groups, spans = pair_clusters(
        b.order,
        position[found.a],
        position[found.b],
        found.score,
        profile.merge_threshold,
        profile.cluster_min,
        profile.cluster_max,
    )
    if profile.absorb_threshold is not None:
        # an opt-in memtui rule (pi absorbs only as a new memory arrives, in its extractor)
        _pi_absorb(b, profile, run.pairs, groups, now)
    merged_any: list[str] = []
    for group, (low, high) in zip(groups, spans, strict=True):
        scores = [low, high]  # the lowest and highest score inside the group
        members = [b.current[i] for i in group]
        if merged_text is not None:
            answer = pi_answer(merged_text(members))
            if answer is None:
                continue  # the model's veto (or an answer pi ignores): pi leaves them be
        else:
            # without a model: the best member's wording, cut where pi cuts a model's answer
            answer = pi_answer(best_member(members).content)
        merged, retired = merge_entries(
            members,
            new_id=b.new_id(group),
            now=now,
            rule="pi",
            content=answer,
            max_paths=profile.max_paths,
            max_tags=profile.max_tags,
        )
        # pi's merged entry: no evidence count, the consolidation's session, nothing else
        merged = merged.with_(evidence_count=None, extra={"sourceSession": run.session})
        action = b.add(
            "merge",
            group,
            [merged, *retired],
            f"pi: union-find over similarity ≥ {profile.merge_threshold:g}, "
            f"clusters of {profile.cluster_min}–{profile.cluster_max}",
            {**span(scores), "size": len(group)},
            f"{len(group)} entries about one thing (pi similarity up to {max(scores):.2f}) "
            f"become one, worded as "
            f"{_whose(members) if merged_text is None else 'the model says'}.",
        )
        merged_any.append(action.id)
    if merged_any:
        pi_dedupe(b, now, merged_any)


def _pi_absorb(
    b: Builder,
    profile: Profile,
    pairs: list[Pair],
    groups: list[list[str]],
    now: datetime,
) -> None:
    assert profile.absorb_threshold is not None
    in_cluster = {i for g in groups for i in g}
    # pi absorbs a near-identical pair as it arrives; here: the ones its clusters leave out
    high = [
        (p.a, p.b, p.score)
        for p in pairs
        if p.score >= profile.absorb_threshold and p.a not in in_cluster and p.b not in in_cluster
    ]
    high_groups = capped_components(high, b.order, b.cap)
    for group, members, scores in each_group(b, high_groups, high):
        survivor = min(members, key=lambda m: (m.created_at or now, b.position[m.id]))
        b.add(
            "absorb",
            group,
            absorbed(
                survivor,
                members,
                now,
                boost=profile.absorb_boost,
                max_paths=profile.max_paths,
                max_tags=profile.max_tags,
            ),
            f"pi: similarity ≥ {profile.absorb_threshold:g}",
            span(scores),
            f"{len(group)} near-identical entries (pi similarity {max(scores):.2f}): the older "
            f"keeps its wording and gains tags, paths and importance +{profile.absorb_boost:g}.",
        )


PI_MERGE = Step("merge", 0.8, _pi_absorb_and_merge)


def _whose(members: Sequence[Memory]) -> str:
    best = max(members, key=lambda m: (SOURCE_PRIORITY[m.source], m.importance))
    if best.source is Source.USER:
        return "the user wrote it"
    return "the strongest entry"
