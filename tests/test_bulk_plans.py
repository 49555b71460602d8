"""Bulk expiry records in version-2 plan files: the expiries of one rule share one record with
a row per entry, each row its own action; files from before (an expiry per action) still read
and apply; a tampered row is refused naming its action. And pi's clusters in numpy are the
union-find's."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtui import planfile
from memtui.engine import pi_dedupe
from memtui.engine.candidates import Pair
from memtui.engine.clusters import clusters, pair_clusters
from memtui.engine.similarity import pi_normalise
from memtui.model import Memory
from memtui.planfile import compact as plan_compact
from memtui.service import Service
from memtui.stores import Store
from memtui.stores.transfer import create_native_store
from tests.conftest import CliResult
from tests.test_scale_plans import refused_naming_the_action

Cli = Callable[..., CliResult]
NOW = "2026-12-01T00:00:00Z"
NOW_AT = datetime(2026, 12, 1, tzinfo=UTC)


WORDS = [
    "amber",
    "basalt",
    "cedar",
    "dune",
    "ember",
    "fjord",
    "glacier",
    "harbor",
    "iris",
    "juniper",
    "kelp",
    "lagoon",
    "meadow",
    "nectar",
    "orchid",
    "prairie",
    "quarry",
    "reef",
    "sierra",
    "tundra",
    "umber",
    "valley",
    "willow",
    "yarrow",
]


def _roomy_items(tmp_path: Path) -> Path:
    """items.jsonl with a dozen recent, important entries per user, so that its expiries stay
    under the wholesale guard's fifth of a user's entries (engine/wholesale.py), and two more
    stale entries of u1's, so that one user's expiries share a record."""
    fixture = Path(__file__).parent / "fixtures" / "items.jsonl"
    lines = fixture.read_text().splitlines()
    for n, word in enumerate(WORDS):
        record = {
            "id": 100 + n,
            "content": f"{word} {word[::-1]}",  # no word in common with another
            "importance": 0.9,
            "created_at": "2026-11-30T12:00:00Z",
            "last_accessed": "2026-11-30T12:00:00Z",
            "user_id": "u1" if n % 2 else "u2",
            "category": "general",
            "superseded_at": "0001-01-01T00:00:00Z",
            "version": 1,
            "updated_at": "0001-01-01T00:00:00Z",
        }
        lines.append(json.dumps(record))
    for n, words in enumerate(["quince ecniuq", "sorrel lerros"]):  # two more stale ones of u1's
        stale = {**json.loads(lines[6]), "id": 200 + n, "content": words}
        lines.append(json.dumps(stale))
    store = tmp_path / "items.jsonl"
    store.write_text("\n".join(lines) + "\n")
    return store


@pytest.fixture(autouse=True)
def clock_at_the_plans_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plans here are made as of NOW; they are applied with the clock there too (a plan made
    for a later time than the clock is refused)."""
    monkeypatch.setenv("MEMTUI_NOW", NOW)


def _plan(cli: Cli, store: Path, out: Path, *extra: str) -> dict[str, Any]:
    result = cli("plan", store, "--out", out, "--now", NOW, *extra)
    assert result.code == 0, result.err
    data: dict[str, Any] = json.loads(out.read_text())
    return data


def _expiry_records(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for a in plan["actions"] if a.get("bulk") and a["kind"] == "expire"]


def _expiry_record(plan: dict[str, Any]) -> dict[str, Any]:
    """The expiry record with the most rows (a plan has one per user and rule)."""
    return max(_expiry_records(plan), key=lambda r: len(r["rows"]))


def test_the_expiries_of_a_rule_share_one_record_with_a_row_each(
    fixture_copy: Callable[[str], Path], cli: Cli, tmp_path: Path
) -> None:
    store_path = _roomy_items(tmp_path)
    v1, v2 = tmp_path / "v1.json", tmp_path / "v2.json"
    full = _plan(cli, store_path, v1, "--plan-version", "1")
    compact = _plan(cli, store_path, v2)
    # an expiry that needs a decision (a once-important fact) keeps a full record
    expiries = [a for a in full["actions"] if a["kind"] == "expire" and not a["needs_decision"]]
    assert expiries
    # one record per user and rule (the plan has each user's actions together)
    records = _expiry_records(compact)
    assert len(records) == len({(a["before"][0]["user_id"], a["rule"]) for a in expiries}) == 2
    rows = [row for r in records for row in r["rows"]]
    assert max(len(r["rows"]) for r in records) > 1
    for record in records:
        assert record["columns"] == [
            "action",
            "entry",
            "fingerprint",
            "after",
            "age_days",
            "importance",
        ]
    assert [row[0] for row in rows] == [a["id"] for a in expiries]
    assert [row[1] for row in rows] == [a["targets"][0] for a in expiries]
    assert [row[3] for row in rows] == [(a["depends_on"] or [None])[0] for a in expiries]
    full_records = [a for a in compact["actions"] if a["kind"] == "expire" and not a.get("bulk")]
    assert [a["needs_decision"] for a in full_records] == [True]
    again = planfile.load(str(v2), Store.open(store_path), Service().plans.seal_key())
    del full["seals"]
    assert again.to_dict() == full  # records, reasons, scores and dependencies as made


def test_an_expiry_row_is_rejectable_on_its_own(
    fixture_copy: Callable[[str], Path], cli: Cli, tmp_path: Path
) -> None:
    store = _roomy_items(tmp_path)
    plan = tmp_path / "plan.json"
    skipped, kept = _expiry_record(_plan(cli, store, plan))["rows"][:2]
    result = cli("apply", store, plan, "--skip", skipped[0], "--yes")
    assert result.code == 0, result.err
    after = Store.open(store)
    assert after.get(skipped[1]).status.value == "active"
    assert after.get(kept[1]).status.value == "deleted"


def test_a_file_with_an_expiry_per_action_still_reads_and_applies(
    monkeypatch: pytest.MonkeyPatch, cli: Cli, tmp_path: Path
) -> None:
    outcomes = []
    for name in ("old", "new"):
        (tmp_path / name).mkdir()
        store = _roomy_items(tmp_path / name)
        plan = tmp_path / f"{name}.json"
        with monkeypatch.context() as m:
            if name == "old":  # the writer before bulk expiry rows
                m.setattr(plan_compact, "_expiry_row", lambda *args: None)
            data = _plan(cli, store, plan)
        per_action = [
            a
            for a in data["actions"]
            if a["kind"] == "expire" and "found" in a and not a.get("needs_decision")
        ]
        assert bool(per_action) == (name == "old")
        read = planfile.load(str(plan), Store.open(store), Service().plans.seal_key())
        applied = cli("apply", store, plan, "--yes")
        assert applied.code == 0, applied.err
        made = {k: v for k, v in read.to_dict().items() if k != "store"}  # its own copy
        outcomes.append((made, applied.out.replace(str(store), "STORE")))
        outcomes.append((Store.open(store).memories(), None))
    assert outcomes[0] == outcomes[2] and outcomes[1] == outcomes[3]


RowTamper = Callable[[list[list[Any]]], str]


def _age(rows: list[list[Any]]) -> str:
    rows[0][4] += 1.5
    return str(rows[0][0])


def _importance(rows: list[list[Any]]) -> str:
    rows[0][5] = rows[0][5] / 2
    return str(rows[0][0])


def _with_dependency(rows: list[list[Any]]) -> list[Any]:
    return next(r for r in rows if r[3] is not None)


def _dependency_dropped(rows: list[list[Any]]) -> str:
    row = _with_dependency(rows)
    row[3] = None
    return str(row[0])


def _dependency_moved(rows: list[list[Any]]) -> str:
    row = _with_dependency(rows)
    row[3] = "a1" if row[3] != "a1" else "a2"  # an earlier action, on another entry
    return str(row[0])


def _entry_swapped(rows: list[list[Any]]) -> str:
    rows[0][1] = rows[1][1]
    return str(rows[0][0])


TAMPERING: dict[str, RowTamper] = {
    "age": _age,
    "importance": _importance,
    "dependency dropped": _dependency_dropped,
    "dependency moved": _dependency_moved,
    "entry swapped": _entry_swapped,
}


@pytest.mark.parametrize("how", sorted(TAMPERING))
def test_a_tampered_expiry_row_is_refused_naming_the_action(
    how: str, tmp_path: Path, cli: Cli
) -> None:
    def tamper(plan: dict[str, Any]) -> str:
        return TAMPERING[how](_expiry_record(plan)["rows"])

    said = refused_naming_the_action(cli, _roomy_items(tmp_path), tamper, "--now", NOW)
    assert " (expire) " in said and "Traceback" not in said


def _reference(
    pairs: list[Pair], order: list[str], line: float, low: int, high: int
) -> tuple[list[list[str]], list[tuple[float, float]]]:
    """Union-find over the pairs at or above the line, and the score span inside each group."""
    chosen = [p for p in pairs if p.score >= line]
    groups = clusters([(p.a, p.b) for p in chosen], order, low, high)
    spans = []
    for group in groups:
        inside = [p.score for p in chosen if p.a in group and p.b in group]
        spans.append((min(inside), max(inside)))
    return groups, spans


def _clusters_in_numpy(
    pairs: list[Pair], order: list[str], line: float, low: int, high: int
) -> tuple[list[list[str]], list[tuple[float, float]]]:
    position = {ident: n for n, ident in enumerate(order)}
    a = np.asarray([position[p.a] for p in pairs], dtype=np.int64)
    b = np.asarray([position[p.b] for p in pairs], dtype=np.int64)
    score = np.asarray([p.score for p in pairs], dtype=np.float64)
    return pair_clusters(order, a, b, score, line, low, high)


@settings(max_examples=150, deadline=None)
@given(
    size=st.integers(2, 30),
    edges=st.lists(
        st.tuples(st.integers(0, 29), st.integers(0, 29), st.floats(0.0, 1.0)), max_size=60
    ),
    line=st.sampled_from([0.0, 0.3, 0.7]),
    bounds=st.sampled_from([(2, 8), (2, 3), (1, 30), (3, 5)]),
)
def test_pi_clusters_in_numpy_are_the_union_finds(
    size: int, edges: list[tuple[int, int, float]], line: float, bounds: tuple[int, int]
) -> None:
    order = [f"m{n:02d}" for n in reversed(range(size))]  # ids not in their sort order
    pairs = [Pair(order[x], order[y], s) for x, y, s in edges if x < size and y < size and x != y]
    found = _clusters_in_numpy(pairs, order, line, *bounds)
    assert found == _reference(pairs, order, line, *bounds)


def test_pi_clusters_of_a_long_chain_join_it_whole() -> None:
    order = [f"m{n}" for n in range(2000)]
    pairs = [Pair(order[n + 1], order[n], 0.5) for n in range(1999)]
    groups, spans = _clusters_in_numpy(pairs, order, 0.3, 2, 2000)
    assert groups == [order] and spans == [(0.5, 0.5)]


@pytest.mark.parametrize("version", [1, 2])
def test_a_plan_file_over_its_versions_size_limit_is_refused_unread(
    version: int, fixture_copy: Callable[[str], Path], cli: Cli, tmp_path: Path
) -> None:
    store = _roomy_items(tmp_path)
    data = store.read_bytes()
    limit = planfile.PLAN_V2_SIZE_LIMIT if version == 2 else planfile.PLAN_SIZE_LIMIT
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as f:
        f.write(b'{"format": "memtui-plan", "version": %d, "actions": [' % version)
        f.truncate(limit + 1)  # sparse: no disk, no memory
    result = cli("apply", store, huge, "--yes")
    assert result.code == 1
    assert f"over the plan size limit of {limit:,} bytes" in result.err, result.err
    assert len(result.err.strip().splitlines()) == 1
    assert store.read_bytes() == data


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=40) | st.text(max_size=10))
def test_pi_dedupe_normalises_as_pi(text: str) -> None:
    assert pi_dedupe._normalised(text) == pi_normalise(text)


def test_rows_keep_the_plans_order_around_expiries_that_wait_for_a_decision(
    cli: Cli, tmp_path: Path
) -> None:
    made = datetime(2026, 8, 1, tzinfo=UTC)
    texts = [
        "the office plants need water",
        "prefers tea to coffee",
        "the bus leaves at eight",
        "the printer is on the second floor",
    ]
    memories = [
        Memory(
            id=f"m{n}",
            content=text,
            category="preference" if n == 1 else "fact",
            importance=0.1,
            created_at=made,
            evidence_count=3 if n == 1 else None,  # seen often: archived only by decision
        )
        for n, text in enumerate(texts)
    ]
    # recent, important entries: the four archivings are a fifth of the store, not more
    memories += [
        Memory(id=f"r{n}", content=f"{word} {word[::-1]}", importance=0.9, created_at=NOW_AT)
        for n, word in enumerate(WORDS[:16])
    ]
    store = tmp_path / "store.json"
    create_native_store(store, memories, now=made, kind="import", reason="test")
    full = _plan(cli, store, tmp_path / "v1.json", "--plan-version", "1", "--profile", "default")
    compact = _plan(cli, store, tmp_path / "v2.json", "--profile", "default")
    archives = [
        (a["targets"], a["needs_decision"]) for a in full["actions"] if a["kind"] == "archive"
    ]
    assert archives == [(["m0"], False), (["m1"], True), (["m2"], False), (["m3"], False)]
    bulk = [[row[1] for row in a["rows"]] for a in compact["actions"] if a.get("bulk")]
    assert bulk[-2:] == [["m0"], ["m2", "m3"]]
    again = planfile.load(str(tmp_path / "v2.json"), Store.open(store), Service().plans.seal_key())
    del full["seals"]
    assert again.to_dict() == full
