"""After a commit, undo or rollback the store knows its history without reading its ledger
again: what it shows must be what a fresh read of the file and ledger gives."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from memtui.stores import Change, Store, create_native_store, open_store
from tests.conftest import NOW

STORES = ["realistic-store.json", "items.jsonl", "native"]


@pytest.fixture
def store_path(
    request: pytest.FixtureRequest, fixture_copy: Callable[[str], Path], tmp_path: Path
) -> Path:
    if request.param == "native":
        source = open_store(fixture_copy("realistic-store.json"))
        path = tmp_path / "native.json"
        create_native_store(path, source.memories(), now=NOW, kind="import", reason="test")
        return path
    return fixture_copy(request.param)


def _history(store: Store) -> list[dict[str, object]]:
    return [tx.to_dict() for tx in store.history()]


def _same_as_fresh(store: Store, path: Path) -> None:
    fresh = open_store(path)
    assert _history(store) == _history(fresh)
    assert store.undone() == fresh.undone()
    assert store.problems() == fresh.problems()


@pytest.mark.parametrize("store_path", STORES, indirect=True)
def test_history_after_commits_undo_and_rollback_is_what_a_fresh_read_gives(
    store_path: Path,
) -> None:
    store = open_store(store_path)
    before = len(store.history())  # read once before the changes: the cache is warm
    live = store.memories()
    first = store.commit(
        [Change(m, m.with_(importance=0.25)) for m in live[:3]],
        actor="user",
        kind="edit",
        reason="three",
        now=NOW,
    )
    _same_as_fresh(store, store_path)
    later = NOW + timedelta(minutes=1)
    retired = store.memories()[4]
    store.commit(
        [Change(retired, retired.with_(importance=0.5, tags=("kept",)))],
        actor="plan",
        kind="plan",
        reason="one",
        now=later,
    )
    _same_as_fresh(store, store_path)
    store.undo(now=later + timedelta(minutes=1))
    _same_as_fresh(store, store_path)
    assert [tx.kind for tx in store.history()][:1] == ["undo"]
    store.rollback(first.backup, now=later + timedelta(minutes=2))
    _same_as_fresh(store, store_path)
    assert len(store.history()) == before + 4
