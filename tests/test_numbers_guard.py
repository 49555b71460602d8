"""memtui's own rule never merges two entries that state different numbers ("I am 13 years
old." / "I am 24 years old."): they may contradict each other, so the plan offers them as a
conflict to decide; a refinement that adds a number still merges."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from memtui.engine.lexical import numbers_in
from memtui.engine.planner import make_plan
from memtui.engine.profiles import PROFILES
from memtui.model import Memory
from memtui.stores import create_native_store
from tests.conftest import NOW, CliResult

Cli = Callable[..., CliResult]


def _entries(*texts: str) -> list[Memory]:
    return [
        Memory(id=f"m{n}", content=t, category="identity", importance=0.7, created_at=NOW)
        for n, t in enumerate(texts)
    ]


def test_numbers_stated_in_digits_and_words() -> None:
    assert numbers_in("I am 13 years old") == {"13"}
    assert numbers_in("I have three sisters and 2.5 cats") == {"3", "2.5"}
    assert numbers_in("no numbers here") == frozenset()


def test_entries_whose_numbers_disagree_are_a_conflict_not_a_merge() -> None:
    memories = _entries("I am 13 years old.", "I am 24 years old.", "I like green tea.")
    plan = make_plan(memories, PROFILES["default"], NOW)
    kinds = {a.kind: a for a in plan.actions}
    assert "merge" not in kinds and "absorb" not in kinds
    conflict = kinds["conflict"]
    assert sorted(conflict.targets) == ["m0", "m1"] and conflict.needs_decision


def test_a_refinement_that_adds_a_number_still_merges() -> None:
    memories = _entries("I have two cats at home.", "I have two cats at home and 1 dog.")
    plan = make_plan(memories, PROFILES["default"], NOW)
    assert [a.kind for a in plan.actions if a.kind in ("merge", "absorb")] == ["merge"]


def test_no_merge_in_the_demo_plan_joins_entries_whose_numbers_disagree() -> None:
    from memtui.demo import DEFAULT_SIZE, make_demo_memories

    plan = make_plan(make_demo_memories(DEFAULT_SIZE, 7, NOW), PROFILES["default"], NOW)
    joined = [a for a in plan.actions if a.kind in ("merge", "absorb")]
    assert joined
    for action in joined:
        stated = [numbers_in(m.content) for m in action.before if numbers_in(m.content)]
        for n, a in enumerate(stated):
            for b in stated[n + 1 :]:
                assert not (a - b and b - a), (action.id, [m.content for m in action.before])


def test_a_hand_merge_on_a_native_store_words_by_memtuis_rule(tmp_path: Path, cli: Cli) -> None:
    path = tmp_path / "store.json"
    texts = ("I have three sisters.", "I have three sisters and they live in Oslo.")
    create_native_store(path, _entries(*texts), now=NOW, kind="import", reason="test")
    result = cli("merge", path, "m0", "m1", "--json")
    assert result.code == 0, result.err
    merged = json.loads(result.out)["merged"]["content"]
    assert "；" not in merged
    assert merged == "I have three sisters and they live in Oslo."  # the most complete entry
