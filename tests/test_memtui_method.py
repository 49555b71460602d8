"""memtui's own method (the `default` profile): exact candidate search, groups that neither
chain nor overflow the cap, rule wording, the once-important guardrail, and quality floors on
the labelled calibration set."""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from itertools import combinations
from pathlib import Path
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtui.engine import candidates
from memtui.engine.candidates import brute_force_pairs, candidate_pairs, memtui_vectors
from memtui.engine.clusters import UnionFind
from memtui.engine.embedded import Embeddings
from memtui.engine.grouping import linkage_groups
from memtui.engine.lexical import content_tokens, vector_cosine, vector_matrix
from memtui.engine.planner import make_plan
from memtui.engine.profiles import get_profile
from memtui.engine.similarity import pi_similarity, text_similarity
from memtui.engine.wording import clauses, rule_wording
from memtui.errors import MemtuiError
from memtui.model import Memory, Status
from memtui.planfile.reading import parse
from memtui.stores import open_store
from tests.conftest import FIXTURES

NOW = datetime(2026, 11, 30, tzinfo=UTC)
CALIBRATION = FIXTURES / "calibration"

WORDS = ["coffee", "Coffees", "tea", "likes", "liked", "the", "User", "dog", "dogs", "running"]
WORDS += ["runs", "Berlin", "42", "3.5", "and", "I", "my", "studies", "studied", "x"]
CJK = list("用户喜欢咖啡非常每天早上喝美式茶的了我们")
ASTRAL = ["𠀀", "𠀁", "🎉", "𝒳", "𪜀"]


@st.composite
def texts(draw: st.DrawFn) -> str:
    parts = draw(
        st.lists(st.sampled_from(WORDS + CJK + ASTRAL + [" ", "，", "!", "."]), max_size=12)
    )
    return "".join(p if p in CJK or p in ASTRAL else p + " " for p in parts)


@st.composite
def stores(draw: st.DrawFn) -> list[Memory]:
    out = [
        Memory(id=f"m{i}", content=draw(texts()), user_id=draw(st.sampled_from(["u1", "u2", None])))
        for i in range(draw(st.integers(0, 40)))
    ]
    for i in range(draw(st.integers(0, 6))):  # near-duplicates, as stores have them
        if out:
            src = draw(st.sampled_from(out))
            tail = draw(st.sampled_from(["", "!", " tea", "喝", " dogs"]))
            out.append(src.with_(id=f"d{i}", content=src.content + tail))
    return out


@pytest.mark.parametrize("budget", [40, -1e9], ids=["prefix", "counted"])
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(memories=stores(), threshold=st.sampled_from([0.05, 0.3, 0.45, 0.5, 0.8, 0.95, 1.0]))
def test_memtui_candidate_search_equals_brute_force(
    budget: float, memories: list[Memory], threshold: float
) -> None:
    with patch.object(candidates, "_PREFIX_BUDGET", budget):
        fast = candidate_pairs(memories, "memtui", threshold)
    assert fast == brute_force_pairs(memories, "memtui", threshold)


def test_memtui_search_on_a_real_store_finds_the_same_pairs() -> None:
    memories = open_store(FIXTURES / "realistic-store.json").memories()
    fast = candidate_pairs(memories, "memtui", 0.5)
    assert fast == brute_force_pairs(memories, "memtui", 0.5)
    assert fast and all(p.score >= 0.5 for p in fast)


def test_memtui_similarity_reads_content_words() -> None:
    # inflections meet, stopwords do not count, numbers are words, CJK by bigrams; how much
    # one likes a thing is one word
    assert content_tokens("She cooks running; he cooked the runs") == ("cook", "run", "cook", "run")
    assert content_tokens("I have 2 dogs") == content_tokens("I have two dogs") == ("2", "dog")
    assert content_tokens("I love to cook") == content_tokens("I enjoy cooking")
    assert "咖啡" in content_tokens("用户每天喝咖啡")
    assert text_similarity("I love dogs", "I loved my dog", "memtui") == pytest.approx(1.0)
    assert text_similarity("I love dogs", "I hate cats", "memtui") == 0.0
    assert text_similarity("我喜欢咖啡", "我喜欢喝茶", "memtui") < 0.5


def test_idf_is_per_user() -> None:
    # "coffee" is everywhere for u1 (weak), rare for u2 (strong): the same two texts score
    # differently in the two stores
    common = [Memory(id=f"c{i}", content=f"coffee note {i}", user_id="u1") for i in range(8)]
    pair = [("a", "coffee berlin"), ("b", "coffee munich")]
    u1 = [*common, *(Memory(id=f"u1{i}", content=t, user_id="u1") for i, t in pair)]
    u2 = [Memory(id=f"u2{i}", content=t, user_id="u2") for i, t in pair]
    u2 += [Memory(id=f"o{i}", content=f"tea note {i}", user_id="u2") for i in range(8)]
    vectors = {m.id: v for m, v in zip(u1 + u2, memtui_vectors(u1 + u2), strict=True)}
    assert vector_cosine(vectors["u1a"], vectors["u1b"]) < vector_cosine(
        vectors["u2a"], vectors["u2b"]
    )


# -- grouping ---------------------------------------------------------------------------------


@st.composite
def graphs(draw: st.DrawFn) -> tuple[list[str], list[tuple[str, str, float]], np.ndarray]:
    n = draw(st.integers(2, 30))
    ids = [f"e{i:02d}" for i in range(n)]
    raw = draw(st.lists(st.floats(0, 1), min_size=n * n, max_size=n * n))
    matrix = np.array(raw).reshape(n, n)
    matrix = (matrix + matrix.T) / 2
    np.fill_diagonal(matrix, 1.0)
    return ids, [], matrix


@settings(max_examples=80, deadline=None)
@given(
    graph=graphs(),
    threshold=st.sampled_from([0.3, 0.5, 0.7]),
    cap=st.integers(2, 8),
    linkage=st.sampled_from(["average", "complete", "single"]),
)
def test_groups_keep_every_member_and_respect_the_cap(
    graph: tuple[list[str], list[tuple[str, str, float]], np.ndarray],
    threshold: float,
    cap: int,
    linkage: str,
) -> None:
    ids, _, matrix = graph
    index = {ident: n for n, ident in enumerate(ids)}
    pairs = [
        (ids[x], ids[y], float(matrix[x, y]))
        for x, y in combinations(range(len(ids)), 2)
        if matrix[x, y] >= threshold
    ]
    groups = linkage_groups(
        pairs,
        ids,
        lambda chosen: matrix[np.ix_([index[i] for i in chosen], [index[i] for i in chosen])],
        threshold,
        linkage=linkage,
        min_size=1,
        max_size=cap,
    )
    placed = [m for g in groups for m in g.members]
    in_pairs = {x for p in pairs for x in p[:2]}
    assert sorted(placed) == sorted(in_pairs)  # each exactly once: nothing lost, no overlap
    assert all(len(g.members) <= cap for g in groups)
    for g in groups:
        if len(g.members) >= 2:
            inner = [matrix[index[a], index[b]] for a, b in combinations(g.members, 2)]
            assert g.weakest == pytest.approx(min(inner))
            if linkage == "complete" and not g.split_from:
                assert g.weakest >= threshold


def test_average_linkage_does_not_chain_unrelated_entries() -> None:
    # A≈B (0.77) and B≈C (0.48) but A and C share nothing: union-find (single linkage) makes
    # one group of three; average linkage keeps the close pair and leaves C alone
    texts = ["swimming pool beach", "swimming pool beach rainy reading", "rainy reading birthday"]
    memories = [Memory(id=str(i), content=t) for i, t in enumerate(texts)]
    memories += [Memory(id=f"f{i}", content=f"note {i} zz{i}") for i in range(6)]
    average = dataclasses.replace(get_profile("default"), merge_threshold=0.4)
    single = dataclasses.replace(average, linkage="single")
    merged = [
        [a.targets[:-1] for a in make_plan(memories, p, NOW).actions if a.kind == "merge"]
        for p in (average, single)
    ]
    assert merged == [[["0", "1"]], [["0", "1", "2"]]]


@pytest.mark.parametrize("name", ["default", "pi", "longterm", "thesearch"])
def test_no_action_merges_more_than_the_cap(name: str) -> None:
    profile = dataclasses.replace(get_profile(name), cluster_max=3)
    same = [Memory(id=f"s{i}", content="I love the beach.", importance=0.5) for i in range(7)]
    memories = [*open_store(FIXTURES / "realistic-store.json").memories(), *same]
    plan = make_plan(memories, profile, NOW, store_format="pi" if name == "pi" else "native")
    sizes = [len(a.before) for a in plan.actions if a.kind in ("merge", "absorb")]
    assert sizes and max(sizes) <= 3
    taken = {t for a in plan.actions if a.kind in ("merge", "absorb") for t in a.targets}
    assert sum(f"s{i}" in taken for i in range(7)) >= 6  # split, not dropped


def test_an_oversized_group_is_split_and_says_so() -> None:
    memories = [
        Memory(id=f"s{i}", content=f"I love the sunny beach {('daily', 'again')[i % 2]}")
        for i in range(11)
    ]
    memories += [Memory(id=f"f{i}", content=f"filler {i} w{i}") for i in range(10)]
    profile = dataclasses.replace(
        get_profile("default"), absorb_threshold=None, cluster_max=4, subject_threshold=None
    )
    plan = make_plan(memories, profile, NOW)
    merges = [a for a in plan.actions if a.kind == "merge"]
    assert sorted(len(a.before) for a in merges) == [3, 4, 4]
    assert all(a.scores["split_from"] == 11 for a in merges)
    assert all("Split from a group of 11" in a.reason for a in merges)


# -- wording ----------------------------------------------------------------------------------

CLAUSES = [
    "I love dogs.",
    "I have two dogs named Rex and Bo.",
    "My dogs sleep on the sofa.",
    "I walk my dogs every morning.",
    "我每天早上喝一杯美式咖啡。",
    "我对花生过敏；",
    "I live in Berlin",
    "I work at a startup in Berlin.",
]


@settings(max_examples=100, deadline=None)
@given(
    members=st.lists(
        st.lists(st.sampled_from(CLAUSES), min_size=1, max_size=4, unique=True),
        min_size=2,
        max_size=6,
    ),
    cap=st.sampled_from([20, 60, 200, 500]),
)
def test_wording_stays_under_the_cap_and_never_repeats_a_clause(
    members: list[list[str]], cap: int
) -> None:
    memories = [Memory(id=f"m{i}", content=" ".join(c)) for i, c in enumerate(members)]
    wording = rule_wording(memories, cap)
    base = next(m for m in memories if m.id == wording.base)
    assert wording.text.startswith(base.content)
    assert len(wording.text) <= max(cap, len(base.content))
    said = clauses(wording.text)
    assert len(said) == len(set(said))
    # every stretch is attributed, in order, and the added clauses are verbatim from members
    assert wording.spans[0] == (0, len(base.content), base.id)
    for start, end, ident in wording.spans[1:]:
        member = next(m for m in memories if m.id == ident)
        assert wording.text[start:end] in member.content


def test_wording_keeps_the_most_complete_member_and_adds_only_new_content() -> None:
    members = [
        Memory(id="a", content="I have two dogs."),
        Memory(id="b", content="I have two dogs named Rex and Bo."),
        Memory(id="c", content="I have 2 dogs. They sleep on my sofa."),
    ]
    wording = rule_wording(members, 500)
    assert wording.base == "b"
    # "I have 2 dogs." says nothing new ("2" is "two"); the sofa is new
    assert wording.text == "I have two dogs named Rex and Bo. They sleep on my sofa."
    assert [(a["member"], a["clause"]) for a in wording.added] == [("c", "They sleep on my sofa.")]
    tight = rule_wording(members, 40)
    assert tight.text == "I have two dogs named Rex and Bo."
    assert [c["clause"] for c in tight.left_out] == ["They sleep on my sofa."]


def test_a_merge_action_records_where_its_words_came_from() -> None:
    memories = [
        Memory(id="a", content="I love hiking in the alps."),
        Memory(id="b", content="I love hiking in the alps. My boots are red."),
        *(Memory(id=f"f{i}", content=f"filler {i} w{i}") for i in range(6)),
    ]
    plan = make_plan(memories, get_profile("default"), NOW)
    [merge] = [a for a in plan.actions if a.kind == "merge"]
    provenance = merge.details["provenance"]
    assert provenance["base"] == "b" and provenance["spans"] == [[0, len(memories[1].content), "b"]]
    assert "no new words" in merge.reason
    assert merge.scores["min_score"] == merge.scores["max_score"] > 0.5
    data = json.loads(json.dumps(plan.to_dict()))
    assert parse(data, "plan.json")[0].to_dict() == data  # the plan file keeps it
    [written] = [a for a in data["actions"] if a["kind"] == "merge"]
    assert written["details"]["provenance"] == provenance


# -- the once-important guardrail -------------------------------------------------------------


def test_archiving_a_once_important_fact_needs_a_decision() -> None:
    memories = open_store(FIXTURES / "items.jsonl").memories()
    default = make_plan(memories, get_profile("default"), NOW, store_format="longterm")
    peanut = next(a for a in default.actions if a.kind == "archive" and a.targets == ["6"])
    assert peanut.needs_decision and "once important (importance 1.00)" in peanut.reason
    assert peanut.id not in default.default_approved()
    weather = next(a for a in default.actions if a.kind == "archive" and a.targets == ["7"])
    # episodic, never important: not once important; held only because a third of the user's
    # entries would go at once (the wholesale guard)
    assert "once important" not in weather.reason
    assert weather.reason.startswith("Held for review: the plan would archive 2 of 6 entries")
    longterm = make_plan(memories, get_profile("longterm"), NOW, store_format="longterm")
    expire = next(a for a in longterm.actions if a.kind == "expire" and a.targets == ["6"])
    # the Go rule still proposes it (faithful), but memtui asks first in every profile
    assert expire.needs_decision and expire.id not in longterm.default_approved()


def test_evidence_also_makes_a_memory_once_important() -> None:
    old = NOW - timedelta(days=400)
    seen = Memory(
        id="x", content="prefers aisle seats", category="preference", importance=0.5,
        created_at=old, last_accessed_at=old, last_decayed_at=old, evidence_count=2,
    )  # fmt: skip
    once = seen.with_(id="y", content="zz once", evidence_count=1)
    fresh = [  # so that two archivings stay under a fifth of the store (the wholesale guard)
        Memory(id=f"f{n}", content=f"{word} {word[::-1]}x", importance=0.9, created_at=NOW)
        for n, word in enumerate(["ab", "cd", "ef", "gh", "ij", "kl", "mn", "op"])
    ]
    plan = make_plan([seen, once, *fresh], get_profile("default"), NOW)
    decided = {a.targets[0]: a.needs_decision for a in plan.actions if a.kind == "archive"}
    assert decided == {"x": True, "y": False}


def test_the_builder_refuses_an_action_over_the_cap() -> None:
    from memtui.engine.rules.run import Builder

    memories = [Memory(id=str(i), content="x") for i in range(4)]
    b = Builder(memories, "native", NOW, 3)
    with pytest.raises(MemtuiError, match="over the profile's cap of 3"):
        b.add("merge", ["0", "1", "2", "3"], [], "rule", {}, "why")


# -- quality floors on the labelled set -------------------------------------------------------


def _calibration() -> tuple[list[dict[str, str]], list[dict[str, object]]]:
    if not (CALIBRATION / "facts.jsonl").exists() or not (CALIBRATION / "pairs.jsonl").exists():
        pytest.skip("the labelled calibration set (tests/fixtures/calibration) is not here")
    read = lambda p: [json.loads(x) for x in Path(p).read_text("utf-8").splitlines() if x.strip()]  # noqa: E731
    return read(CALIBRATION / "facts.jsonl"), read(CALIBRATION / "pairs.jsonl")


def grouping_scores(
    facts: list[dict[str, str]], embeddings: Embeddings | None = None
) -> tuple[float, float]:
    """Pairwise precision and recall of `default`'s groups against the labelled groups."""
    when = NOW - timedelta(hours=1)
    memories = [
        Memory(
            id=f["id"], content=f["text"], importance=0.5, user_id=f["user"],
            created_at=when, last_accessed_at=when, last_decayed_at=when,
        )
        for f in facts
    ]  # fmt: skip
    plan = make_plan(memories, get_profile("default"), NOW, embeddings=embeddings)
    if embeddings is not None:
        assert plan.params["similarity"]["method"] == "memtui+embed"
    uf = UnionFind()
    for action in plan.actions:
        # these labels say "the same memory": the check of that tier (one subject's
        # complementary facts are another tier, with its own labelled set)
        if action.kind in ("merge", "absorb") and action.details.get("tier") != "subject":
            for other in action.targets[1:]:
                uf.union(action.targets[0], other)
    by_user: dict[str, list[dict[str, str]]] = defaultdict(list)
    for f in facts:
        by_user[f["user"]].append(f)
    tp = fp = fn = 0
    for members in by_user.values():
        for a, b in combinations(members, 2):
            said, gold = uf.find(a["id"]) == uf.find(b["id"]), a["group"] == b["group"]
            tp, fp, fn = tp + (said and gold), fp + (said and not gold), fn + (gold and not said)
    return tp / max(1, tp + fp), tp / max(1, tp + fn)


# (precision, recall) just under what bench/quality_bench.py measures, all and English alone
# (grouping dev 0.867 / 0.333, test 0.825 / 0.367; English dev 0.864 / 0.521, test 0.825 /
# 0.524; pairs dev 0.792 / 0.325, test 0.762 / 0.356): a regression fails. Recall is lower than
# on the first labelled set because the set now holds twice the Chinese restatements, which
# words alone rarely find (docs/design.md#two-tiers); English is held apart so they cannot hide a
# regression there.
FLOORS = {("dev", None): (0.86, 0.33), ("test", None): (0.82, 0.36)}
FLOORS |= {("dev", "en"): (0.86, 0.52), ("test", "en"): (0.82, 0.52)}


@pytest.mark.parametrize(("split", "lang"), sorted(FLOORS, key=str))
def test_default_quality_floors_on_the_labelled_set(split: str, lang: str | None) -> None:
    facts, _ = _calibration()
    chosen = [f for f in facts if f["split"] == split and lang in (None, f["lang"])]
    precision, recall = grouping_scores(chosen)
    floor_p, floor_r = FLOORS[(split, lang)]
    assert precision >= floor_p and recall >= floor_r, (precision, recall)


def test_default_pair_classification_floors_on_the_labelled_set() -> None:
    facts, pairs = _calibration()
    line = get_profile("default").merge_threshold
    assert line is not None
    by_user: dict[str, list[dict[str, str]]] = defaultdict(list)
    for f in facts:
        by_user[f["user"]].append(f)
    vectors: dict[str, dict[str, float]] = {}
    for members in by_user.values():
        store = [Memory(id=f["id"], content=f["text"]) for f in members]
        vectors.update(zip((f["id"] for f in members), memtui_vectors(store), strict=True))
    for split, (floor_p, floor_r) in PAIR_FLOORS.items():
        chosen = [p for p in pairs if p["split"] == split]
        said = [vector_cosine(vectors[str(p["a"])], vectors[str(p["b"])]) >= line for p in chosen]
        gold = [p["label"] == 1 for p in chosen]
        tp = sum(s and g for s, g in zip(said, gold, strict=True))
        precision, recall = tp / max(1, sum(said)), tp / max(1, sum(gold))
        assert precision >= floor_p and recall >= floor_r, (split, precision, recall)


PAIR_FLOORS = {"dev": (0.78, 0.32), "test": (0.75, 0.35)}


def test_vector_matrix_agrees_with_the_reference_cosine() -> None:
    memories = open_store(FIXTURES / "realistic-store.json").memories()[:60]
    vectors = memtui_vectors(memories)
    matrix = vector_matrix(vectors)
    for x, y in combinations(range(len(vectors)), 2):
        assert matrix[x, y] == pytest.approx(vector_cosine(vectors[x], vectors[y]), abs=1e-12)


def test_merged_members_leave_the_active_store() -> None:
    memories = [
        Memory(id="a", content="I love hiking in the alps."),
        Memory(id="b", content="I love hiking in the alps every summer."),
        *(Memory(id=f"f{i}", content=f"filler {i} w{i}") for i in range(6)),
    ]
    plan = make_plan(memories, get_profile("default"), NOW)
    [merge] = [a for a in plan.actions if a.kind == "merge"]
    statuses = {m.id: m.status for m in merge.after}
    assert statuses["a"] is Status.MERGED and statuses["b"] is Status.MERGED


def test_the_memtui_rule_groups_with_any_similarity_method() -> None:
    # e.g. a pi store planned with pi's similarity but memtui's grouping and wording
    profile = dataclasses.replace(get_profile("default"), method="pi", merge_threshold=0.5)
    memories = open_store(FIXTURES / "realistic-store.json").memories()
    plan = make_plan(memories, profile, NOW, store_format="pi")
    merges = [a for a in plan.actions if a.kind == "merge"]
    assert merges and all(len(a.before) <= profile.cluster_max for a in merges)
    for action in merges:
        scores = [pi_similarity(x.content, y.content) for x, y in combinations(action.before, 2)]
        assert action.scores["min_score"] == pytest.approx(min(scores), abs=1e-6)
        if "split_from" not in action.scores:  # average linkage: no group below the line
            assert sum(scores) / len(scores) >= 0.5
