"""Conflicts that are conflicts (the `default` profile): two entries of one subject that give
different values of one attribute, not two entries that merely score in a band."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtui.engine import clashes
from memtui.engine.candidates import candidate_pairs
from memtui.engine.clashes import clash
from memtui.engine.planner import make_plan
from memtui.engine.profiles import get_profile
from memtui.model import Memory

NOW = datetime(2026, 12, 1, tzinfo=UTC)

CLASHING = [
    ("I have two dogs.", "I have three dogs.", "numbers"),
    ("Two dogs live with me.", "I have three dogs.", "numbers"),
    ("I am 24 years old.", "I am 40 years old.", "numbers"),
    ("I love cats.", "I hate cats.", "negation"),
    ("User likes green tea", "User doesn't like green tea", "negation"),
    ("用户喜欢咖啡", "用户不喜欢咖啡", "negation"),
    ("用户是学生", "用户不是学生", "negation"),
    ("I live in colorado.", "I live in alaska.", "value"),
    ("My favorite color is orange.", "My favourite color is yellow.", "value"),
    ("用户住在北京", "用户住在上海", "value"),
    ("Emily works with Anna on the garden", "Emily works with Maria on the garden", "value"),
]
NOT_CLASHING = [
    ("I have two dogs.", "I have one cat."),  # two things counted
    ("Mona is 34 years old.", "Mona has been an agent for 12 years."),
    ("Anna has two dogs.", "Ben has three dogs."),  # two people
    ("Caroline enjoys abstract painting.", "Melanie enjoys abstract painting."),
    ("I like coffee.", "I like tea."),  # a person likes many things
    ("I am a vegan.", "I am a librarian."),  # and is many things
    ("Tim is divorced.", "Tim is a carpenter."),
    ("Emily is interested in painting.", "Emily is interested in music."),
    ("I love dogs.", "I like dogs."),
    ("姚国栋喜欢美酒", "姚国栋非常喜欢品尝美酒"),  # 非常: "very", not a negation
]


@pytest.mark.parametrize(("a", "b", "how"), CLASHING)
def test_a_different_value_of_one_attribute_clashes(a: str, b: str, how: str) -> None:
    assert clash(a, b) == how
    assert clash(b, a) == how


@pytest.mark.parametrize(("a", "b"), NOT_CLASHING)
def test_related_facts_do_not_clash(a: str, b: str) -> None:
    assert clash(a, b) is None
    assert clash(b, a) is None


def _store(*texts: str) -> list[Memory]:
    return [
        Memory(
            id=f"m{n}",
            content=text,
            category="preference",
            importance=0.7,
            created_at=NOW - timedelta(days=3 - n),
            last_accessed_at=NOW - timedelta(hours=1),
        )
        for n, text in enumerate(texts)
    ]


def _conflicts(memories: list[Memory], profile: str = "default") -> list[tuple[list[str], str]]:
    plan = make_plan(memories, get_profile(profile), NOW)
    return [(a.targets, a.reason) for a in plan.actions if a.kind == "conflict"]


def test_pairs_that_only_score_in_the_band_are_not_conflicts() -> None:
    # the old rule proposed every same-category pair scoring in [0.45, 0.55)
    default = get_profile("default")
    assert default.conflict_low is not None and default.conflict_high is not None
    for texts in [
        ("User drinks green tea every morning", "User drinks green tea at work"),
        ("User plays tennis on weekends", "User plays chess on weekends"),
    ]:
        memories = _store(*texts)
        [pair] = candidate_pairs(memories, "memtui", default.conflict_low)
        assert default.conflict_low <= pair.score < default.conflict_high
        assert _conflicts(memories) == []


@pytest.mark.parametrize(
    ("texts", "why"),
    [
        (("User lives in Berlin", "User lives in Munich"), "give different values in one place"),
        (("User likes green tea", "User doesn't like green tea"), "say it and its opposite"),
        (("User has two cats", "Three cats live with the user"), "state different numbers"),
    ],
)
def test_a_value_difference_is_a_conflict_to_decide(texts: tuple[str, str], why: str) -> None:
    memories = _store(*texts)
    [(targets, reason)] = _conflicts(memories)
    kinds = [a.kind for a in make_plan(memories, get_profile("default"), NOW).actions]
    assert "merge" not in kinds and "absorb" not in kinds  # "likes" / "doesn't like" score 1.0
    assert targets == ["m0", "m1"]  # the older, then the newer that would supersede it
    assert f"Two preference entries {why}" in reason and "Needs a decision" in reason


def test_a_conflict_with_an_entry_merged_in_the_same_plan_names_the_merged_entry() -> None:
    memories = _store(
        "User has two dogs at home",
        "User has two dogs at home and walks them daily",
        "User has three dogs at home",
    )
    plan = make_plan(memories, get_profile("default"), NOW)
    kinds = [a.kind for a in plan.actions]
    assert "conflict" in kinds
    conflict = next(a for a in plan.actions if a.kind == "conflict")
    made = {m.id for a in plan.actions if a.kind in ("merge", "absorb") for m in a.after}
    assert set(conflict.targets) & (made | {"m2"})
    assert "m2" in conflict.targets


_WORDS = st.sampled_from(["i", "my", "favorite", "color", "is", "live", "in", "ohio", "green", "a"])


@settings(max_examples=400, deadline=None)
@given(
    st.lists(_WORDS, min_size=1, max_size=9),
    st.lists(_WORDS, min_size=1, max_size=9),
    st.sampled_from(["", "Anna ", "Maria ", "我住在", "北京"]),
)
def test_the_quick_look_before_difflib_never_drops_a_value_clash(
    wa: list[str], wb: list[str], name: str
) -> None:
    """`_one_short_replace` only spares difflib pairs it would not call a value clash."""
    a, b = " ".join(wa), " ".join([*wb[:-1], name + wb[-1]])
    ta, tb = clashes._read(a)[0], clashes._read(b)[0]
    full = clashes._replaced_value(a, b, ta, tb)
    assert not full or clashes._one_short_replace(ta, tb)
