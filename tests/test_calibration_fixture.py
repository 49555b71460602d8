"""The labelled calibration set is well formed: it guards the fixture, it measures no method."""

from __future__ import annotations

import json
from collections import Counter
from itertools import combinations

import pytest

from tests.conftest import FIXTURES

CAL = FIXTURES / "calibration"
POSITIVE_KINDS = {"restatement", "refinement", "same-fact"}
NEGATIVE_KINDS = {"same-topic", "contradiction", "unrelated"}


def read_jsonl(name: str) -> list[dict]:
    return [json.loads(line) for line in (CAL / name).read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def facts() -> dict[str, dict]:
    rows = read_jsonl("facts.jsonl")
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), "fact ids are unique"
    return {r["id"]: r for r in rows}


@pytest.fixture(scope="module")
def pairs() -> list[dict]:
    return read_jsonl("pairs.jsonl")


def test_facts_have_the_documented_fields(facts: dict[str, dict]) -> None:
    for f in facts.values():
        assert set(f) == {"id", "lang", "user", "text", "group", "split", "source"}
        assert f["lang"] in {"en", "zh"}
        assert f["split"] in {"dev", "test"}
        assert f["text"].strip() == f["text"] and f["text"]
        assert f["group"].startswith(f["user"] + "/"), "groups never span users"
        assert f["source"]


def test_user_stores_are_small_and_one_language_one_split(facts: dict[str, dict]) -> None:
    by_user: dict[str, list[dict]] = {}
    for f in facts.values():
        by_user.setdefault(f["user"], []).append(f)
    for user, rows in by_user.items():
        # the smallest MemoryBank user (张志强, zh-u14) says 11 things worth keeping
        assert 10 <= len(rows) <= 40, user
        assert len({r["lang"] for r in rows}) == 1, user
        assert len({r["split"] for r in rows}) == 1, user
        texts = [r["text"] for r in rows]
        assert len(texts) == len(set(texts)), f"{user} holds a text twice"
        sizes = Counter(r["group"] for r in rows)
        assert any(2 <= n <= 5 for n in sizes.values()), f"{user} has no restatement group"
        assert 1 in sizes.values(), f"{user} has no singleton"
    splits = Counter(rows[0]["split"] for rows in by_user.values())
    assert abs(splits["dev"] - splits["test"]) <= 1


def test_pairs_refer_to_facts_of_one_user_and_agree_with_groups(
    facts: dict[str, dict], pairs: list[dict]
) -> None:
    seen: set[frozenset[str]] = set()
    for p in pairs:
        assert set(p) == {"a", "b", "label", "kind", "lang", "split"}
        a, b = facts[p["a"]], facts[p["b"]]
        assert p["a"] != p["b"]
        assert a["user"] == b["user"]
        assert p["lang"] == a["lang"] and p["split"] == a["split"]
        assert p["label"] == int(a["group"] == b["group"])
        assert p["kind"] in (POSITIVE_KINDS if p["label"] else NEGATIVE_KINDS)
        key = frozenset((p["a"], p["b"]))
        assert key not in seen, "a pair is listed once"
        seen.add(key)


def test_every_within_group_pair_is_listed(facts: dict[str, dict], pairs: list[dict]) -> None:
    listed = {frozenset((p["a"], p["b"])) for p in pairs}
    groups: dict[str, list[str]] = {}
    for f in facts.values():
        groups.setdefault(f["group"], []).append(f["id"])
    for members in groups.values():
        for a, b in combinations(members, 2):
            assert frozenset((a, b)) in listed


def test_counts_meet_the_minimums(pairs: list[dict]) -> None:
    assert len(pairs) >= 600
    assert sum(p["label"] for p in pairs) >= 150
    assert sum(p["kind"] in {"same-topic", "contradiction"} for p in pairs) >= 150
    assert 4 * sum(p["lang"] == "zh" for p in pairs) >= len(pairs)
    for split in ("dev", "test"):
        assert sum(p["label"] for p in pairs if p["split"] == split) >= 50
        # enough Chinese restatements to measure a method for them on each split
        assert sum(p["label"] for p in pairs if p["split"] == split and p["lang"] == "zh") >= 25
