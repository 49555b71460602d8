"""A pi store laid out by hand (another indentation, tabs, one line, CRLF, `\\u` escapes,
`1.0`, keys twice): memtui changes only what it was asked to. Every entry it did not touch
keeps its bytes, a changed entry is written as pi writes it at the file's indentation, and
undo or restore gives an entry back exactly as the file had it."""

from __future__ import annotations

import difflib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from memtui.errors import MemtuiError
from memtui.service import Service
from memtui.stores import Change, MemoryStore, open_store
from memtui.times import from_epoch_ms

FIXTURES = Path(__file__).parent / "fixtures"
LOAD = FIXTURES / "pi_conformance" / "load"
NOW = from_epoch_ms(1797000000000)
BOOKKEEPING = ("updatedAt", "dailyAddedDate", "dailyAddedCount", "adaptation", "windowStart")
BOOKKEEPING += ("lastAdaptedAt", "injections", "recallHits")


def _layouts() -> dict[str, tuple[str, Any]]:
    """name → (file text, how one entry is spelled in it at depth 2)."""
    value = json.loads((FIXTURES / "example-store.json").read_text())

    def nested(entry: Any, indent: str) -> str:
        return json.dumps(entry, indent=indent, ensure_ascii=True).replace("\n", "\n" + indent * 2)

    return {
        "4 spaces, escapes": (
            json.dumps(value, indent=4, ensure_ascii=True),
            lambda e: nested(e, "    "),
        ),
        "tabs": (json.dumps(value, indent="\t", ensure_ascii=True), lambda e: nested(e, "\t")),
        "one line": (
            json.dumps(value, separators=(",", ":"), ensure_ascii=True),
            lambda e: json.dumps(e, separators=(",", ":"), ensure_ascii=True),
        ),
        "CRLF": (
            json.dumps(value, indent=2, ensure_ascii=True).replace("\n", "\r\n") + "\r\n",
            lambda e: nested(e, "  ").replace("\n", "\r\n"),
        ),
    }


LAYOUTS = _layouts()


def _store(tmp_path: Path, text: str) -> tuple[Path, MemoryStore]:
    path = tmp_path / "memory-store.json"
    path.write_bytes(text.encode())
    return path, open_store(str(path))


def _changed_lines(before: str, after: str) -> list[str]:
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def _undo_all(store: MemoryStore) -> None:
    while True:
        live = [t for t in store.transactions() if t.id not in store.undone() and not t.undoes]
        if not live:
            return
        store.undo(live[-1].id, now=NOW)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_an_edit_keeps_every_other_entry_as_the_file_spelled_it(
    layout: str, tmp_path: Path
) -> None:
    text, spelled = LAYOUTS[layout]
    path, store = _store(tmp_path, text)
    entries = json.loads(text)["memories"]
    edited = store.memories()[1]
    store.commit(
        [Change(edited, edited.with_(importance=0.25))],
        actor="user",
        kind="edit",
        reason="t",
        now=NOW,
    )
    written = path.read_bytes().decode()
    for entry in entries:
        assert (spelled(entry) in written) == (entry["id"] != edited.id), entry["id"]
    assert "\\u" in written or layout == "one line" or "CRLF" in layout  # escapes kept
    assert ('"potency": 0.25' in written) or ('"potency":0.25' in written)
    json.loads(written)
    if layout == "CRLF":
        assert "\n" not in written.replace("\r\n", "")
    store.undo(now=NOW)
    assert path.read_bytes() == text.encode()


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_merge_restore_and_undo_give_the_entries_back_byte_for_byte(
    layout: str, tmp_path: Path
) -> None:
    text, _spelled = LAYOUTS[layout]
    path, store = _store(tmp_path, text)
    a, b = store.memories()[0], store.memories()[1]
    Service(clock=lambda: NOW).merges.merge(store, [a.id, b.id], content=None)
    Service(clock=lambda: NOW).merges.restore(store, a.id)
    # both members back as the file spelled them; only pi's bookkeeping differs
    changed = _changed_lines(text, path.read_bytes().decode())
    assert changed and all(any(f'"{k}"' in line for k in BOOKKEEPING) for line in changed)
    _undo_all(store)
    assert path.read_bytes() == text.encode()


def _hand_made_inputs() -> list[Path]:
    out = []
    for path in sorted(LOAD.glob("*.input.json")):
        try:
            store = open_store(str(path))
        except MemtuiError:
            continue
        if any(not m.id.startswith("mem_noid") for m in store.memories()):
            out.append(path)
    return out


@pytest.mark.parametrize("source", _hand_made_inputs(), ids=lambda p: p.name)
def test_the_conformance_inputs_come_back_as_they_were(source: Path, tmp_path: Path) -> None:
    """pi's load cases were written by hand (odd spellings, keys twice, entries pi drops):
    an edit touches one entry, and undo gives the file back (pi's `version` is 1)."""
    original = source.read_text()
    path = tmp_path / "memory-store.json"
    shutil.copy(source, path)
    store = open_store(str(path))
    edited = [m for m in store.memories() if not m.id.startswith("mem_noid")][-1]
    store.commit(
        [Change(edited, edited.with_(importance=0.5 if edited.importance != 0.5 else 0.25))],
        actor="user",
        kind="edit",
        reason="t",
        now=NOW,
    )
    changed = _changed_lines(original, path.read_text())
    assert len(changed) <= 2 * 30  # one entry and the stamp, not the file
    store.undo(now=NOW)
    changed = _changed_lines(original, path.read_text())
    assert all('"version"' in line or line in ("-]}", '+],"version":1}') for line in changed)
