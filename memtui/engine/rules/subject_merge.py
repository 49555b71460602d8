"""memtui's merge tier *subject*: complementary facts about one subject become one entry that
keeps every fact (engine/subject_tier.py groups them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from memtui.engine.candidates import (
    user_groups,
)
from memtui.engine.embedded import (
    SubjectScale,
    entry_vectors,
    subject_matrix,
    subject_pairs,
)
from memtui.engine.merging import merge_entries
from memtui.engine.profiles import Profile
from memtui.engine.rules.apart import dated, never_together, similarity_matrix
from memtui.engine.rules.run import Builder, Place, PlanRun, live
from memtui.engine.subject_tier import lexical_source, subject_groups
from memtui.engine.wording import subject_wording
from memtui.model import Memory

SUBJECT_RULE = "memtui: one subject"


def subject_merge(
    run: PlanRun, units: list[tuple[list[str], str]], stated: Mapping[str, frozenset[str]]
) -> None:
    """Tier *subject*: complementary facts about one subject become one entry that keeps every
    fact. Average linkage at the subject line continues from the first tier's groups (each
    an entry now) and the entries it left alone (engine/subject_tier.py)."""
    b, profile, found, now = run.b, run.profile, run.found, run.now
    assert profile.subject_threshold is not None and found is not None
    line = profile.subject_threshold
    searched = list(found.memories)
    unit_of = np.full(len(searched), -1, dtype=np.int64)
    position = {m.id: n for n, m in enumerate(searched)}
    results: list[str] = []
    places: list[Place] = []  # each unit's place among every user's units
    for members, result in units:
        if live(b, result):
            unit_of[[position[i] for i in members]] = len(results)
            results.append(result)
            places.append((0, b.place(members[0])))
    for n, m in enumerate(searched):
        if unit_of[n] < 0 and live(b, m.id) and b.current[m.id] is m:
            unit_of[n] = len(results)
            results.append(m.id)
            places.append((1, b.place(m.id)))
    counts = np.bincount(unit_of[unit_of >= 0], minlength=len(results)).tolist()
    sizes = dict(zip(results, counts, strict=True))
    a, c, score = found.a, found.b, found.score
    source = lexical_source(b.eligible, b.vectors or []) if b.embeddings is None else None
    if b.embeddings is not None and profile.subject_cosine is not None:
        a, c, score, source = _subject_meaning(b, profile, searched, (a, c, score))
    if source is None:
        source = similarity_matrix(b, profile.method)
    scores_of = never_together(b, source, stated, frames=True)
    groups = subject_groups(
        unit_of,
        a,
        c,
        score,
        lambda rows: scores_of([searched[r].id for r in rows]),
        line,
        profile.cluster_max,
    )
    for group in groups:
        entries = [b.current[results[u]] for u in group.units]
        entries.sort(key=lambda m: b.position[m.id])
        wording = subject_wording(dated(entries), profile.wording_max_chars)
        while wording is None and len(entries) > 2:
            entries = entries[:-1]  # everything must fit: the latest member waits
            wording = subject_wording(dated(entries), profile.wording_max_chars)
        if wording is None:
            continue
        ids = [m.id for m in entries]
        merged, retired = merge_entries(
            entries,
            new_id=b.new_id(ids),
            now=now,
            rule="memtui",
            content=wording.text,
            base=entries[0],
            max_paths=profile.max_paths,
            max_tags=profile.max_tags,
        )
        facts = sum(sizes[m.id] for m in entries)
        b.add(
            "merge",
            ids,
            [merged, *retired],
            f"{SUBJECT_RULE}: average linkage at ≥ {line:g}, up to {profile.cluster_max} "
            "entries, every fact kept",
            {
                "min_score": group.weakest,
                "mean_score": group.mean,
                "max_score": group.strongest,
                "size": len(entries),
            },
            f"{len(entries)} entries about one subject become one entry, keeping every fact "
            f"(memtui similarity {group.mean:.2f} on average, the weakest pair "
            f"{group.weakest:.2f}; {facts} facts in all).",
            details={"tier": "subject", "provenance": wording.provenance()},
            order=(1, places[group.units[0]]),
        )


def _subject_meaning(
    b: Builder,
    profile: Profile,
    searched: Sequence[Memory],
    pairs: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, Callable[[list[str]], np.ndarray]]:
    """The subject tier with sentence embeddings: its own reading of a cosine (the fragments of
    one subject sit lower than restatements), the pairs it adds and its scores."""
    assert b.embeddings is not None and profile.subject_threshold is not None
    assert profile.subject_cosine is not None
    scale = SubjectScale(
        profile.subject_threshold,
        profile.subject_cosine,
        profile.subject_cosine_cjk
        if profile.subject_cosine_cjk is not None
        else profile.subject_cosine,
    )
    embedded = entry_vectors(searched, b.embeddings)
    found = [
        (group[x], group[y], s)
        for group in user_groups(searched)
        for x, y, s in subject_pairs([embedded[i] for i in group], scale)
    ]
    extra = np.array([t[:2] for t in found], dtype=np.int64).reshape(-1, 2)
    a = np.concatenate([pairs[0], extra[:, 0]])
    c = np.concatenate([pairs[1], extra[:, 1]])
    score = np.concatenate([pairs[2], np.array([t[2] for t in found], dtype=np.float64)])
    lexical = lexical_source(b.eligible, b.vectors or [])
    where = {m.id: n for n, m in enumerate(searched)}

    def scores(ids: list[str]) -> np.ndarray:
        return subject_matrix(lexical(ids), [embedded[where[i]] for i in ids], scale)

    return a, c, score, scores
