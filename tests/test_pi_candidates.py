"""pi plans from the candidate arrays are the plans from brute-force pairs, with and without
the opt-in rules that need the pairs one by one (absorb, conflicts); and the pairs built from
the arrays come highest score first, then by position."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from memtui.demo import make_demo_memories
from memtui.engine import candidates
from memtui.engine.candidates import PairTable, brute_force_pairs, candidate_pairs
from memtui.engine.planner import make_plan
from memtui.engine.profiles import get_profile
from memtui.engine.rules import pair_search
from memtui.model import Memory

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def _store(size: int, users: int) -> list[Memory]:
    memories = make_demo_memories(size, 11, NOW)
    return [m.with_(user_id=f"user-{i % users}") for i, m in enumerate(memories)]


def _brute_force_table(memories: Sequence[Memory], method: str, line: float, **_: Any) -> PairTable:
    position = {m.id: n for n, m in enumerate(memories)}
    pairs = brute_force_pairs(memories, method, line)
    return PairTable(
        memories,
        np.asarray([position[p.a] for p in pairs], dtype=np.int64),
        np.asarray([position[p.b] for p in pairs], dtype=np.int64),
        np.asarray([p.score for p in pairs], dtype=np.float64),
    )


@pytest.mark.parametrize(
    ("changes", "rule"),
    [
        ({}, "pi: union-find over similarity ≥ 0.3"),
        ({"absorb_threshold": 0.8}, "pi: similarity ≥ 0.8"),
        ({"conflict_low": 0.3, "conflict_high": 0.5}, "pi in [0.3, 0.5)"),
    ],
)
@pytest.mark.parametrize("counted", [False, True])
def test_a_pi_plan_equals_the_plan_from_brute_force_pairs(
    changes: dict[str, float], rule: str, counted: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if counted:  # every intersection counted at once, as on a big store
        monkeypatch.setattr(candidates, "_PREFIX_BUDGET", -(10**9))
    memories = _store(700, 2)
    profile = dataclasses.replace(get_profile("pi"), **changes)
    made = make_plan(memories, profile, NOW, store="s")
    assert any(a.rule.startswith(rule) for a in made.actions)
    monkeypatch.setattr(pair_search, "candidate_table", _brute_force_table)
    reference = make_plan(memories, profile, NOW, store="s")
    assert made.to_dict() == reference.to_dict()


@pytest.mark.parametrize("counted", [False, True])
def test_pairs_come_highest_score_first_then_by_position(
    counted: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if counted:
        monkeypatch.setattr(candidates, "_PREFIX_BUDGET", -(10**9))
    memories = _store(400, 2)
    pairs = candidate_pairs(memories, "pi", 0.3)
    position = {m.id: n for n, m in enumerate(memories)}
    keys = [(-p.score, position[p.a], position[p.b]) for p in pairs]
    assert len(set(p.score for p in pairs)) > 10
    assert keys == sorted(keys)
    assert all(position[p.a] < position[p.b] for p in pairs)
