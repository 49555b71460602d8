"""memtui's method on the consolidation set's test split (held out: the lines were chosen on
dev): floors just under what it reaches, per language and per tier, on words alone and with
the local embeddings; every merge keeps every member's facts. The figures themselves come from
`python bench/consolidation_bench.py --embed` (bench/README.md#the-consolidation-set-both-tiers)."""

from __future__ import annotations

import dataclasses
from functools import cache

import pytest

from memtui.engine.dates import resolved
from memtui.engine.embedded import Embeddings
from memtui.engine.planner import make_plan
from memtui.engine.profiles import get_profile
from memtui.engine.wording import missing_words
from memtui.model import Status
from tests.consolidation_set import (
    Score,
    as_memories,
    by_user,
    load_facts,
    load_hard_pairs,
    plan_time,
    score_set,
)

TEST = [f for f in load_facts() if f.split == "test"]
HARD = load_hard_pairs()
DEFAULT = get_profile("default")


@cache
def lexical() -> dict[str, Score]:
    return score_set(
        TEST, HARD, lambda memories, now: make_plan(memories, DEFAULT, now, store_format="native")
    )


@cache
def embedded() -> dict[str, Score]:
    from memtui.embedding import load_embedder

    embedder = load_embedder()
    rows = embedder.embed([f.text for f in TEST])
    vectors = Embeddings(embedder.name, dict(zip((f.id for f in TEST), rows, strict=True)))
    return score_set(
        TEST,
        HARD,
        lambda memories, now: make_plan(
            memories, DEFAULT, now, store_format="native", embeddings=vectors
        ),
    )


# (language, F1, same-memory tier precision, one-subject tier precision, one-subject recall)
LEXICAL = [("all", 0.48, 0.94, 0.62, 0.13), ("en", 0.56, 0.94, 0.64, 0.18), ("zh", 0.02, 0, 0, 0)]
EMBEDDED = [
    ("all", 0.56, 0.94, 0.55, 0.22),
    ("en", 0.62, 0.94, 0.56, 0.25),
    ("zh", 0.2, 0, 0.48, 0.12),
]


def _reaches(score: Score, f1: float, same_p: float, subject_p: float, subject_r: float) -> None:
    assert score.overall.f1 >= f1, score.overall.row()
    assert score.precision_by_tier["same"].precision >= same_p
    assert score.precision_by_tier["subject"].precision >= subject_p
    assert score.recall_by_tier["subject"].recall >= subject_r


@pytest.mark.parametrize(("lang", "f1", "same_p", "subject_p", "subject_r"), LEXICAL)
def test_words_alone_reach_their_floors(
    lang: str, f1: float, same_p: float, subject_p: float, subject_r: float
) -> None:
    _reaches(lexical()[lang], f1, same_p, subject_p, subject_r)


@pytest.mark.parametrize(("lang", "f1", "same_p", "subject_p", "subject_r"), EMBEDDED)
def test_embeddings_reach_their_floors(
    lang: str, f1: float, same_p: float, subject_p: float, subject_r: float
) -> None:
    _reaches(embedded()[lang], f1, same_p, subject_p, subject_r)


def test_the_subject_tier_doubles_what_one_memory_alone_finds() -> None:
    same_only = score_set(
        TEST,
        HARD,
        lambda memories, now: make_plan(
            memories,
            dataclasses.replace(DEFAULT, subject_threshold=None),
            now,
            store_format="native",
        ),
    )
    assert lexical()["all"].overall.recall >= 1.5 * same_only["all"].overall.recall


def test_guards_keep_other_people_and_other_episodes_apart() -> None:
    joined = lexical()["all"].hard_joined
    assert joined["other-person"][0] <= 0.06 * joined["other-person"][1]
    assert joined["other-episode"][0] <= 0.12 * joined["other-episode"][1]


def test_conflicts_proposed_are_labelled_contradictions() -> None:
    conflicts = lexical()["all"].conflicts
    assert conflicts.tp >= 8 and conflicts.precision >= 0.9


def test_no_merge_of_the_test_split_loses_a_members_words() -> None:
    checked = 0
    for facts in by_user(TEST).values():
        memories = as_memories(facts)
        plan = make_plan(memories, DEFAULT, plan_time(facts), store_format="native")
        for action in plan.actions:
            if action.kind not in ("merge", "absorb"):
                continue
            [kept] = [m for m in action.after if m.status is Status.ACTIVE]
            for member in action.before:
                said = resolved(member.content, member.created_at)
                assert not missing_words(said, kept.content), (member.content, kept.content)
                checked += 1
    assert checked >= 800
