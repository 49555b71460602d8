"""Edit, merge, restore and undo on every store pi wrote in the conformance data: entries memtui
did not touch stay byte for byte, restored entries come back byte for byte."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from memtui.model import Status
from memtui.service import Service
from memtui.stores import Change, open_store
from memtui.stores.formats.pi import pi_session_header, with_file_header
from memtui.stores.formats.pi_json import dumps as pi_dumps
from memtui.stores.formats.pi_json import loads as pi_loads
from memtui.times import from_epoch_ms

FIXTURES = Path(__file__).parent / "fixtures"
HERE = FIXTURES / "pi_conformance"
NOW = from_epoch_ms(1797000000000)


def _unique_ids(path: Path) -> bool:
    ids = [m.get("id") for m in pi_loads(path.read_bytes())["memories"] if isinstance(m, dict)]
    return len(ids) == len(set(ids)) and all(isinstance(i, str) and i for i in ids)


# (stores with repeated or missing ids, e.g. pi's "<random id>" placeholders, are read-only
# in those entries: tests/test_pi_conformance.py covers them)
STORES = sorted(
    p
    for p in [
        FIXTURES / "example-store.json",
        FIXTURES / "realistic-store.json",
        HERE / "consolidate" / "dedupe-store.json",
        HERE / "numbers.json",
        *(HERE / "decay").glob("*-store.*.json"),
        *(p for p in (HERE / "consolidate").glob("*-store.*.json") if "clusters" not in p.name),
        *(HERE / "load").glob("*.pi-loaded.json"),
    ]
    if _unique_ids(p)
)


def _top(path: Path) -> dict[str, Any]:
    value = pi_loads(path.read_bytes())
    assert isinstance(value, dict)
    return value


def _expect(
    top: dict[str, Any], records: list[Any], written: dict[str, Any], added: int = 0
) -> bytes:
    """The original file with only `records` as its entries and memtui's `updatedAt` (and,
    when memtui added entries, pi's own count of them: `pi_session_header`)."""
    header = {k: v for k, v in top.items() if k != "memories"}
    header["updatedAt"] = written["updatedAt"]
    if added:
        header = pi_session_header(header, NOW, added)
    return pi_dumps(with_file_header(top, header) | {"memories": records})


@pytest.mark.parametrize("source", STORES, ids=[p.name for p in STORES])
def test_memtui_touches_only_what_it_changes(source: Path, tmp_path: Path) -> None:
    original = source.read_bytes()
    top = _top(source)
    assert pi_dumps(top) == original  # pi wrote it: its own layout, spelling and key order
    path = tmp_path / "memory-store.json"
    shutil.copy(source, path)
    store = open_store(str(path))
    entries = [m for m in store.memories() if not m.tenured]
    if len(entries) < 3:
        pytest.skip("fewer than three entries to edit and merge")
    records = list(top["memories"])
    index = {r["id"]: n for n, r in enumerate(records) if isinstance(r, dict) and "id" in r}
    edited, a, b = entries[-1], entries[0], entries[1]

    # edit: one entry changes, the others stay as pi wrote them
    store.commit(
        [Change(edited, edited.with_(importance=1.0))],
        actor="user",
        kind="edit",
        reason="test",
        now=NOW,
    )
    written = _top(path)
    now_records = list(records)
    now_records[index[edited.id]] = written["memories"][index[edited.id]]
    assert now_records[index[edited.id]]["potency"] == 1
    assert b'"potency": 1.0' not in path.read_bytes()
    assert path.read_bytes() == _expect(top, now_records, written)

    # merge two: they leave the file, the merged entry is appended, nothing else moves
    tx = Service(clock=lambda: NOW).merges.merge(store, [a.id, b.id], content=None)
    merged_id = tx.details["merged"]
    written = _top(path)
    kept = [r for r in now_records if r.get("id") not in (a.id, b.id)]
    assert written["memories"][:-1] == kept and written["memories"][-1]["id"] == merged_id
    assert path.read_bytes() == _expect(top, [*kept, written["memories"][-1]], written, 1)

    # restore one member: the merge is undone as a unit, both come back as they were
    Service(clock=lambda: NOW).merges.restore(store, a.id)
    written = _top(path)
    assert store.find(merged_id) is None or store.get(merged_id).status is not Status.ACTIVE
    assert path.read_bytes() == _expect(top, now_records, written, 1)

    # undo everything: the entries are the original bytes again
    while True:
        live = [t for t in store.transactions() if t.id not in store.undone() and not t.undoes]
        if not live:
            break
        store.undo(live[-1].id, now=NOW)
    written = _top(path)
    assert path.read_bytes() == _expect(top, records, written)
