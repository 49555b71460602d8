"""memtui's own merge rule, tier *same*: linkage groups at the merge line, absorbed when every
pair reaches the absorb line and nothing is lost, merged with rule wording otherwise; then tier
*subject* (rules/subject_merge.py) where the profile has a subject line."""

from __future__ import annotations

import math
from collections.abc import Sequence

from memtui.engine.dates import has_time_words
from memtui.engine.grouping import linkage_groups
from memtui.engine.merging import merge_entries
from memtui.engine.rules.apart import (
    apart,
    dated,
    never_together,
    numbers_stated,
    similarity_matrix,
)
from memtui.engine.rules.run import (
    PlanRun,
    Step,
    absorbed,
    most_important,
    subject_tier_on,
)
from memtui.engine.rules.subject_merge import subject_merge
from memtui.engine.wording import missing_words, rule_wording
from memtui.model import Memory


def _memtui_absorb_and_merge(run: PlanRun) -> None:
    """memtui's own, tier *same*: linkage groups over the pairs at or above the merge line; a
    group whose weakest pair reaches the absorb line is a set of duplicates (the most important
    keeps its wording), any other group is merged with rule wording. Then tier *subject*
    (`subject_merge`) where the profile has a subject line. Entries that state
    different numbers, speak of different subjects or of different days never join."""
    b, profile, pairs, now = run.b, run.profile, run.pairs, run.now
    assert profile.merge_threshold is not None
    line = profile.merge_threshold
    stated = numbers_stated(b)
    scored = [
        (p.a, p.b, p.score)
        for p in pairs
        if p.score >= line and not apart(b, stated, p.a, p.b, frames=False)
    ]
    groups = linkage_groups(
        scored,
        b.order,
        never_together(b, similarity_matrix(b, profile.method), stated, frames=False),
        line,
        linkage=profile.linkage,
        min_size=profile.cluster_min,
        max_size=profile.cluster_max,
    )
    absorb_line = profile.absorb_threshold if profile.absorb_threshold is not None else math.inf
    units: list[tuple[list[str], str]] = []  # each group and the entry it became
    for group in groups:
        members = [b.current[i] for i in group.members]
        scores = {
            "min_score": group.weakest,
            "max_score": group.strongest,
            "size": len(members),
        }
        split = ""
        if group.split_from:
            scores["split_from"] = group.split_from
            split = (
                f" Split from a group of {group.split_from} (over the cap of "
                f"{profile.cluster_max}): raise the merge line to make it tighter."
            )
        kept = most_important(b, members)
        if group.weakest >= absorb_line and _keeps_everything(kept, members):
            b.add(
                "absorb",
                group.members,
                absorbed(
                    kept,
                    members,
                    now,
                    max_paths=profile.max_paths,
                    max_tags=profile.max_tags,
                ),
                f"memtui: every pair ≥ {absorb_line:g}",
                scores,
                f"{len(members)} duplicates (memtui similarity ≥ {group.weakest:.2f} for every "
                "pair): the most important keeps its wording and takes in the others' tags, "
                f"accesses and evidence.{split}",
                order=(0, b.place(group.members[0])),
            )
            units.append((group.members, kept.id))
            continue
        wording = rule_wording(dated(members), profile.wording_max_chars)
        merged, retired = merge_entries(
            members,
            new_id=b.new_id(group.members),
            now=now,
            rule="memtui",
            content=wording.text,
            base=next(m for m in members if m.id == wording.base),
            max_paths=profile.max_paths,
            max_tags=profile.max_tags,
        )
        said = "worded as the most complete entry"
        if wording.added:
            n = len(wording.added)
            said += f" plus {_clauses(n)} that add{'s' if n == 1 else ''} something"
        elif not wording.left_out:
            said += " (the others add no new words)"
        if wording.left_out:
            said += (
                f"; {_clauses(len(wording.left_out))} with new words did not fit in "
                f"{profile.wording_max_chars} characters and stay out (see the details)"
            )
        b.add(
            "merge",
            group.members,
            [merged, *retired],
            f"memtui: {profile.linkage} linkage at ≥ {line:g}, groups of "
            f"{profile.cluster_min}–{profile.cluster_max}",
            scores,
            f"{len(members)} entries about one thing (memtui similarity {group.weakest:.2f} for "
            f"the weakest pair, up to {group.strongest:.2f}) become one, {said}.{split}",
            details={"provenance": wording.provenance()},
            order=(0, b.place(group.members[0])),
        )
        units.append((group.members, merged.id))
    if subject_tier_on(profile) and run.found is not None:
        subject_merge(run, units, stated)


def _keeps_everything(kept: Memory, members: Sequence[Memory]) -> bool:
    """Whether an absorb into `kept` loses nothing: its wording says every word of the others
    (surface words: "lively" is not "live"), and no time word would point elsewhere once it
    takes the earliest creation time. Otherwise the group is merged (every clause with a new
    word kept, the dates said)."""
    days = {m.created_at.date() if m.created_at else None for m in members}
    if len(days) > 1 and any(has_time_words(m.content) for m in members):
        return False
    return all(not missing_words(m.content, kept.content) for m in members)


def _clauses(n: int) -> str:
    return f"{n} clause{'s' if n != 1 else ''}"


MEMTUI_MERGE = Step("merge", 0.8, _memtui_absorb_and_merge)
