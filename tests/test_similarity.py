"""Similarity methods and the candidate search that must equal brute force exactly."""

from __future__ import annotations

import json
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtui.engine import candidates
from memtui.engine.candidates import brute_force_pairs, candidate_pairs
from memtui.engine.similarity import memory_similarity, pi_similarity, text_similarity
from memtui.model import Memory
from tests.conftest import FIXTURES

GOLDEN = [
    json.loads(line) for line in (FIXTURES / "golden_similarity.jsonl").read_text().splitlines()
]


@pytest.mark.parametrize("case", GOLDEN, ids=lambda c: f"{c['a'][:12]}|{c['b'][:12]}")
def test_pi_similarity_matches_pi_exactly(case: dict[str, object]) -> None:
    assert pi_similarity(case["a"], case["b"]) == case["sim"]  # type: ignore[arg-type]


def test_tf_cosine_tokenises_like_the_go_system() -> None:
    # CJK ideographs are one token each, ASCII runs are lowercased tokens, the rest separates
    assert text_similarity("用户喜欢咖啡", "用户喜欢咖啡", "tf-cosine") == pytest.approx(1.0)
    assert text_similarity("User likes TEA", "user-likes tea!", "tf-cosine") == pytest.approx(1.0)
    assert text_similarity("用户喜欢咖啡", "User likes tea", "tf-cosine") == 0.0
    assert text_similarity("a b", "a c", "tf-cosine") == pytest.approx(0.5)


def test_tf_cosine_uses_embeddings_when_both_have_them() -> None:
    a = Memory(id="1", content="完全不同", embedding=(1.0, 0.0))
    b = Memory(id="2", content="totally other words", embedding=(1.0, 0.0))
    c = Memory(id="3", content="totally other words", embedding=(1.0, 0.0, 0.0))
    assert memory_similarity(a, b, "tf-cosine") == pytest.approx(1.0)
    assert memory_similarity(b, c, "tf-cosine") == pytest.approx(1.0)  # lengths differ: tf
    assert memory_similarity(a, c, "tf-cosine") == 0.0


def test_rapidfuzz_methods_are_in_unit_range() -> None:
    assert text_similarity("Use pnpm", "use PNPM", "jaro-winkler") == 1.0
    assert (
        text_similarity("pnpm is the package manager", "the package manager is pnpm", "token-set")
        == 1.0
    )
    assert 0.0 <= text_similarity("abc", "xyz", "jaro-winkler") < 0.5


WORDS = ["coffee", "tea", "User", "likes", "the", "pnpm", "package", "manager", "uses", "Go", "I"]
CJK = list("用户喜欢咖啡非常每天早上喝美式茶")
ASTRAL = ["𠀀", "𠀁", "🎉", "𝒳"]


@st.composite
def contents(draw: st.DrawFn) -> str:
    parts = draw(
        st.lists(
            st.sampled_from(WORDS + CJK + ASTRAL + [" ", "，", "!", "x"]), min_size=0, max_size=12
        )
    )
    return "".join(p if p in CJK or p in ASTRAL else p + " " for p in parts)


@st.composite
def stores(draw: st.DrawFn) -> list[Memory]:
    n = draw(st.integers(0, 40))
    out = []
    for i in range(n):
        embedding = None
        if draw(st.integers(0, 4)) == 0:
            dim = draw(st.sampled_from([2, 3]))
            embedding = tuple(
                draw(st.lists(st.floats(-1, 1, allow_nan=False), min_size=dim, max_size=dim))
            )
        out.append(
            Memory(
                id=f"m{i}",
                content=draw(contents()),
                user_id=draw(st.sampled_from(["u1", "u2", None])),
                embedding=embedding,
            )
        )
    # duplicates and near-duplicates, as stores have them
    for i in range(draw(st.integers(0, 6))):
        if out:
            src = draw(st.sampled_from(out))
            out.append(
                src.with_(
                    id=f"d{i}", content=src.content + draw(st.sampled_from(["", "!", " tea", "用"]))
                )
            )
    return out


@pytest.mark.parametrize(
    ("method", "budget"),
    [
        ("pi", 40),
        ("pi", -1e9),
        ("tf-cosine", 40),
        ("tf-cosine", -1e9),
        ("jaro-winkler", 40),
        ("token-set", 40),
    ],
    ids=["pi-prefix", "pi-counted", "tf-prefix", "tf-counted", "jaro-winkler", "token-set"],
)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(memories=stores(), threshold=st.sampled_from([0.05, 0.3, 0.5, 0.75, 0.8, 0.95, 1.0]))
def test_candidate_search_equals_brute_force(
    method: str, budget: float, memories: list[Memory], threshold: float
) -> None:
    """Both strategies (prefix filtering, and counting all pairs at once) are exact."""
    with patch.object(candidates, "_PREFIX_BUDGET", budget):
        fast = candidate_pairs(memories, method, threshold)
    assert fast == brute_force_pairs(memories, method, threshold)


@pytest.mark.parametrize("method", ["pi", "tf-cosine"])
@pytest.mark.parametrize("threshold", [0.3, 0.8])
def test_both_search_strategies_on_a_real_store(method: str, threshold: float) -> None:
    from memtui.stores import open_store

    memories = open_store(FIXTURES / "realistic-store.json").memories()
    fast = candidate_pairs(memories, method, threshold)
    assert fast == brute_force_pairs(memories, method, threshold)
    assert fast and all(p.score >= threshold for p in fast)
