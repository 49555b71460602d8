"""pi's top-level bookkeeping on memtui's own writes: an entry memtui adds to a pi store
counts towards pi's `dailyAddedCount` as pi's own additions do, and undo gives the count back."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memtui.model import Memory
from memtui.service import EntryEdit, Service

FIXTURES = Path(__file__).parent / "fixtures"
SAME_DAY = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)  # the store's dailyAddedDate
NEXT_DAY = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def _top(path: Path) -> dict[str, Any]:
    value = json.loads(path.read_bytes())
    return {k: v for k, v in value.items() if k != "memories"}


def _added(tmp_path: Path, now: datetime) -> tuple[Service, Path, dict[str, Any]]:
    path = tmp_path / "memory-store.json"
    shutil.copy(FIXTURES / "example-store.json", path)
    before = _top(path)
    svc = Service(clock=lambda: now)
    store = svc.stores.open(path)
    memory = Memory(id=store.new_id(now), content="The deploy script lives in ops/deploy.sh")
    svc.entries.add_memory(store, memory)
    return svc, path, before


def test_an_added_entry_counts_as_one_of_the_days_additions(tmp_path: Path) -> None:
    svc, path, before = _added(tmp_path, SAME_DAY)
    after = _top(path)
    assert before["dailyAddedCount"] == 5
    assert after["dailyAddedDate"] == "2026-11-29" and after["dailyAddedCount"] == 6
    assert after["resolvedSources"] == before["resolvedSources"]  # the agent's keys stay
    svc.history.undo(svc.stores.open(path))
    undone = _top(path)
    assert undone["dailyAddedCount"] == 5
    assert {k: v for k, v in undone.items() if k != "updatedAt"} == {
        k: v for k, v in before.items() if k != "updatedAt"
    }


def test_a_new_day_restarts_the_count_and_an_old_window(tmp_path: Path) -> None:
    _svc, path, before = _added(tmp_path, NEXT_DAY)
    after = _top(path)
    assert after["dailyAddedDate"] == "2026-11-30" and after["dailyAddedCount"] == 1
    # the window began on 2026-11-29: not yet seven days old, pi keeps it
    assert after["adaptation"] == before["adaptation"]


def test_an_edit_adds_nothing_to_the_count(tmp_path: Path) -> None:
    path = tmp_path / "memory-store.json"
    shutil.copy(FIXTURES / "example-store.json", path)
    svc = Service(clock=lambda: NEXT_DAY)
    store = svc.stores.open(path)
    first = store.memories()[0]
    svc.entries.edit(store, first.id, EntryEdit(content=first.content + " (checked)"))
    after = _top(path)
    assert after["dailyAddedDate"] == "2026-11-29" and after["dailyAddedCount"] == 5


def test_undos_out_of_order_give_the_days_count_back(tmp_path: Path) -> None:
    path = tmp_path / "memory-store.json"
    shutil.copy(FIXTURES / "example-store.json", path)
    before = _top(path)
    svc = Service(clock=lambda: NEXT_DAY)
    store = svc.stores.open(path)
    first = svc.entries.add_memory(
        store, Memory(id=store.new_id(NEXT_DAY), content="Builds run on CI")
    )
    svc.entries.add_memory(
        store, Memory(id=store.new_id(NEXT_DAY), content="Deploys need a review")
    )
    assert _top(path)["dailyAddedCount"] == 2
    svc.history.undo(store, first.id)  # the older one first: the newer one still counts
    svc.history.undo(store)
    after = _top(path)
    assert (after["dailyAddedDate"], after["dailyAddedCount"]) == ("2026-11-29", 5)
    assert {k: v for k, v in after.items() if k != "updatedAt"} == {
        k: v for k, v in before.items() if k != "updatedAt"
    }
