"""The merge preview's id is the id the merge gets: native and pi ids carry the time, so the
merge keeps the id the person saw (when the store does not hold it by then)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from memtui.model import Memory
from memtui.service import Service
from memtui.stores import create_native_store
from tests.conftest import NOW


class _Ticking:
    """A clock a minute later at every look."""

    def __init__(self) -> None:
        self.now = NOW

    def __call__(self):  # type: ignore[no-untyped-def]
        self.now += timedelta(minutes=1)
        return self.now


@pytest.mark.parametrize("keep", [True, False])
def test_the_merge_gets_the_id_its_preview_showed(tmp_path: Path, keep: bool) -> None:
    path = tmp_path / "store.json"
    memories = [
        Memory(id=f"m{n}", content=f"I like green tea {w}", created_at=NOW)
        for n, w in enumerate(("a lot", "very much"))
    ]
    create_native_store(path, memories, now=NOW, kind="import", reason="test")
    service = Service(clock=_Ticking())
    store = service.stores.open(path)
    merged, _ = service.merges.preview_merge(store, ["m0", "m1"], content=None)
    tx = service.merges.merge(store, ["m0", "m1"], content=None, new_id=merged.id if keep else None)
    assert (tx.details["merged"] == merged.id) is keep
