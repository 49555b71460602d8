"""Reading a native journal: the quick check of a change as JSON gives it says what the full
check says; a big transaction, held as its JSON until its changes are asked for, reads, lists,
undoes and is written back as it was."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtui.model import Memory
from memtui.stores import Change, create_native_store, ledger, open_store
from tests.conftest import CliResult

_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.text(max_size=3),
    st.lists(st.integers(0, 2), max_size=3),
    st.dictionaries(st.text(max_size=2), st.integers(0, 2), max_size=2),
)
_PAIRS = st.dictionaries(
    st.text(max_size=3), st.one_of(_VALUE, st.tuples(_VALUE, _VALUE).map(list))
)
_CHANGE = st.dictionaries(
    st.sampled_from(
        ["id", "before", "after", "before_raw", "after_raw", "diff", "after_fp", "position"]
    ),
    st.one_of(_VALUE, _PAIRS),
)


@settings(max_examples=1500, deadline=None)
@given(st.one_of(_CHANGE, _VALUE))
def test_the_quick_check_of_a_change_never_passes_what_the_full_check_refuses(
    change: Any,
) -> None:
    if ledger._plainly_sound(change):
        assert ledger._sound(change)


def test_a_sound_compact_change_passes_the_quick_check() -> None:
    change = {"id": "m1", "diff": {"importance": [0.5, 0.4]}, "after_fp": "ab", "position": 3}
    assert ledger._plainly_sound(change)
    assert not ledger._plainly_sound({**change, "diff": {"importance": [0.5]}})
    assert not ledger._sound({**change, "diff": {"importance": [0.5]}})


NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
BIG = 600


def _big_transaction(path: Path) -> None:
    memories = [Memory(id=f"m{i}", content=f"memory {i}", importance=0.5) for i in range(BIG)]
    memories.append(Memory(id="other", content="not in the big transaction", importance=0.5))
    create_native_store(path, memories, now=NOW, kind="import", reason="test")
    store = open_store(path)
    store.commit(
        [Change(m, m.with_(importance=0.25)) for m in store.memories()[:BIG]],
        actor="user",
        kind="plan",
        reason="decay everything",
        now=NOW + timedelta(hours=1),
    )


def test_a_big_transaction_read_back_lists_counts_and_undoes_as_it_was_written(
    tmp_path: Path,
) -> None:
    path = tmp_path / "n.json"
    _big_transaction(path)
    committed = open_store(path)
    [_, big] = committed.transactions()
    assert (big.reason, len(big.changes), bool(big.changes)) == ("decay everything", BIG, True)
    assert big.changes[3].id == "m3" and big.changes[-1].id == f"m{BIG - 1}"
    assert [c.before["importance"] for c in big.changes[:2]] == [0.5, 0.5]
    assert open_store(path).transactions() == committed.transactions()

    before = path.read_bytes()
    other = open_store(path)
    m = other.get("other")
    other.commit(
        [Change(m, m.with_(content="one more"))],
        actor="user",
        kind="edit",
        reason="",
        now=NOW + timedelta(hours=2),
    )
    written = orjson.loads(path.read_bytes())["journal"]
    assert written["2"] == orjson.loads(before)["journal"]["2"]  # written back as it was

    undone = open_store(path)
    undone.undo(2, now=NOW + timedelta(hours=3))
    again = open_store(path)
    assert {m.importance for m in again.memories()} == {0.5}
    assert again.get("other").content == "one more"


def test_a_damaged_change_in_a_big_transaction_is_still_named(tmp_path: Path) -> None:
    path = tmp_path / "n.json"
    _big_transaction(path)
    tables = orjson.loads(path.read_bytes())
    tables["journal"]["2"]["changes"][7]["diff"] = "not a diff"
    path.write_bytes(orjson.dumps(tables))
    problems = open_store(path).problems()
    assert any("journal entry 2 is damaged" in p and "a change is damaged" in p for p in problems)


def test_the_agents_change_after_a_big_transaction_is_told_apart_from_memtuis(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    path = tmp_path / "n.json"
    memories = [Memory(id=f"m{i}", content=f"memory {i}", importance=0.5) for i in range(BIG)]
    create_native_store(path, memories, now=NOW, kind="import", reason="test")
    cli("stats", path)
    store = open_store(path)
    store.commit(
        [Change(m, m.with_(importance=0.25)) for m in store.memories()],
        actor="user",
        kind="plan",
        reason="decay everything",
        now=NOW + timedelta(hours=1),
    )
    assert "the agent changed nothing" in cli("stats", path).out
    tables = orjson.loads(path.read_bytes())
    (record,) = (r for r in tables["memories"].values() if r["id"] == "m5")
    record["content"] = "the agent's rewrite"
    path.write_bytes(orjson.dumps(tables))
    listed = cli("outside", path).out
    assert "the agent's rewrite" in listed and "m4" not in listed
    assert "the agent added 0, changed 1, removed 0" in cli("stats", path).out


@pytest.mark.parametrize("kept_over", [1, 10**9])  # every entry held as its JSON, or none
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    edits=st.lists(
        st.lists(st.integers(0, 7), min_size=1, max_size=5, unique=True), min_size=1, max_size=5
    ),
    order=st.randoms(use_true_random=False),
)
def test_images_asked_for_in_any_order_are_the_images_asked_for_newest_first(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    kept_over: int,
    edits: list[list[int]],
    order: Any,
) -> None:
    monkeypatch.setattr(ledger, "_KEPT_AS_JSON", kept_over)
    path = tmp_path_factory.mktemp("order") / "n.json"
    memories = [Memory(id=f"m{i}", content=f"memory {i}", importance=0.5) for i in range(8)]
    create_native_store(path, memories, now=NOW, kind="import", reason="test")
    for n, touched in enumerate(edits, start=1):
        store = open_store(path)
        store.commit(
            [
                Change(store.get(f"m{i}"), store.get(f"m{i}").with_(content=f"take {n}"))
                for i in touched
            ],
            actor="user",
            kind="edit",
            reason="",
            now=NOW + timedelta(minutes=n),
        )

    def images(txs: list[Any]) -> list[Any]:
        return [[(c.id, c.lost, c.before, c.after) for c in tx.changes] for tx in txs]

    newest_first = open_store(path).transactions()
    expected = images(list(reversed(newest_first)))[::-1]
    shuffled = open_store(path).transactions()
    picked = list(range(len(shuffled)))
    order.shuffle(picked)
    got = {i: images([shuffled[i]])[0] for i in picked}
    assert [got[i] for i in range(len(shuffled))] == expected
    assert [c["content"] for c in (ch[3] for ch in expected[-1])] == [f"take {len(edits)}"] * len(
        edits[-1]
    )
