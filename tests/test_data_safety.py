"""Nothing memtui does loses data: symlinked stores, the agent's own top-level pi keys, backups
of commits that failed, TinyDB tables memtui does not own, native records undo must restore."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from memtui.errors import StoreWriteError
from memtui.model import Memory
from memtui.stores import Change, create_native_store, open_store
from memtui.stores.file import store as store_module
from tests.conftest import NOW, CliResult

Cli = Callable[..., CliResult]

PI_ID = "mem_mx1tnnak_a73461d3"
STORES = {"pi": ("example-store.json", PI_ID), "longterm": ("items.jsonl", "1")}


def _native(tmp_path: Path) -> tuple[Path, str]:
    memories = [
        Memory(id=f"n{i}", content=f"native memory {i}", user_id="u", created_at=NOW)
        for i in range(3)
    ]
    path = tmp_path / "native.json"
    create_native_store(path, memories, now=NOW, kind="import", reason="test")
    return path, "n1"


def _store(fmt: str, folder: Path, fixture_copy: Callable[[str], Path]) -> tuple[Path, str]:
    if fmt == "native":
        return _native(folder)
    name, ident = STORES[fmt]
    return fixture_copy(name), ident


# -- 1. a store reached through a symlink is edited in place ---------------------------------


@pytest.mark.parametrize("fmt", ["pi", "longterm", "native"])
@pytest.mark.parametrize("relative", [False, True])
def test_a_symlinked_store_is_edited_where_it_really_is(
    fmt: str, relative: bool, tmp_path: Path, fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    real, ident = _store(fmt, tmp_path, fixture_copy)
    links = tmp_path / "links"
    links.mkdir()
    link = links / ("store" + real.suffix)
    link.symlink_to(os.path.relpath(real, links) if relative else real)

    result = cli("edit", link, ident, "--content", "edited through the link")
    assert result.code == 0, result.err
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert open_store(str(real)).get(ident).content == "edited through the link"
    # lock, sidecar and temp files live beside the real file, never beside the link
    assert sorted(p.name for p in links.iterdir()) == [link.name]
    assert (real.parent / (real.name + ".memtui")).is_dir()
    assert cli("undo", link).code == 0
    assert open_store(str(real)).get(ident).content != "edited through the link"


# -- 2. undo keeps what the agent wrote at the top of a pi store -----------------------------


def _pi_agent_writes(path: Path) -> dict[str, object]:
    """What pi does between two memtui commands: its own top-level bookkeeping."""
    data = json.loads(path.read_bytes())
    data["dailyAddedCount"] += 1
    data["resolvedSources"].append("agent-hash")
    data["adaptation"]["injections"] = 17
    data["updatedAt"] += 3_600_000
    path.write_text(json.dumps(data, indent=2))
    return {k: v for k, v in data.items() if k != "memories"}


def test_undo_keeps_the_agents_top_level_pi_writes(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    path = fixture_copy("example-store.json")
    original = json.loads(path.read_bytes())
    assert cli("edit", path, PI_ID, "--content", "memtui's words").code == 0
    agent = _pi_agent_writes(path)

    result = cli("undo", path)
    assert result.code == 0, result.err
    after = json.loads(path.read_bytes())
    for key in ("dailyAddedCount", "resolvedSources", "adaptation"):
        assert after[key] == agent[key], key
    assert after["updatedAt"] >= agent["updatedAt"]  # never back in time past the agent's write
    entries = {m["id"]: m for m in after["memories"]}
    assert entries[PI_ID] == {m["id"]: m for m in original["memories"]}[PI_ID]


def test_rollback_keeps_the_agents_top_level_pi_writes(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    path = fixture_copy("example-store.json")
    assert cli("edit", path, PI_ID, "--content", "first change").code == 0
    assert cli("edit", path, PI_ID, "--content", "second change").code == 0
    agent = _pi_agent_writes(path)
    assert cli("rollback", path, "2").code == 0  # the backup before the first change
    after = json.loads(path.read_bytes())
    assert after["resolvedSources"] == agent["resolvedSources"]
    assert after["adaptation"] == agent["adaptation"]
    assert after["dailyAddedCount"] == agent["dailyAddedCount"]


def test_undo_without_outside_writes_still_gives_the_same_bytes_back(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    path = fixture_copy("example-store.json")
    data = path.read_bytes()
    assert cli("edit", path, PI_ID, "--content", "memtui's words").code == 0
    assert cli("undo", path).code == 0
    assert path.read_bytes() == data


# -- 3. a commit that fails leaves the backups as they were ----------------------------------


@pytest.mark.parametrize("fmt", ["pi", "longterm", "native"])
def test_failed_commits_never_rotate_real_backups_out(
    fmt: str, tmp_path: Path, fixture_copy: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, ident = _store(fmt, tmp_path, fixture_copy)
    original = path.read_bytes()
    store = open_store(str(path), keep_backups=5)
    for n in range(3):
        m = store.get(ident)
        store.commit(
            [Change(m, m.with_(content=f"good {n}"))], actor="user", kind="edit", reason="", now=NOW
        )
    good = [(b.name, b.path.read_bytes()) for b in store.backups()]
    assert len(good) == 3 and good[-1][1] == original

    real_write = store_module.atomic_write

    def disk_full(target: Path, data: bytes, mode: int | None = None, **how: Any) -> None:
        if Path(target) == path:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write(target, data, mode, **how)

    monkeypatch.setattr(store_module, "atomic_write", disk_full)
    for n in range(20):
        m = store.get(ident)
        with pytest.raises(StoreWriteError, match="no space left on its device"):
            store.commit(
                [Change(m, m.with_(content=f"bad {n}"))],
                actor="user",
                kind="edit",
                reason="",
                now=NOW,
            )
    assert [(b.name, b.path.read_bytes()) for b in store.backups()] == good
    monkeypatch.undo()
    reopened = open_store(str(path))
    assert reopened.get(ident).content == "good 2"
    assert [tx.kind for tx in reopened.transactions()][-3:] == ["edit"] * 3


# -- 4 and 5. native stores: keep what memtui does not own; undo restores the record ---------


def test_a_native_commit_keeps_tables_and_documents_it_does_not_own(
    tmp_path: Path, cli: Cli
) -> None:
    path, ident = _native(tmp_path)
    tables = orjson.loads(path.read_bytes())
    tables["notes"] = {"1": {"text": "the user's own table"}}
    tables["meta"]["2"] = {"owner": "another tool", "n": 2}
    path.write_bytes(orjson.dumps(tables))

    assert cli("edit", path, ident, "--content", "changed").code == 0
    after = orjson.loads(path.read_bytes())
    assert after["notes"] == tables["notes"]
    assert after["meta"]["2"] == tables["meta"]["2"]
    assert list(after) == list(tables)
    assert cli("undo", path).code == 0
    after_undo = orjson.loads(path.read_bytes())
    assert after_undo["notes"] == tables["notes"] and after_undo["meta"]["2"] == {
        "owner": "another tool",
        "n": 2,
    }


def test_native_undo_restores_the_record_as_the_file_had_it(tmp_path: Path, cli: Cli) -> None:
    path, ident = _native(tmp_path)
    tables = orjson.loads(path.read_bytes())
    [key] = [k for k, r in tables["memories"].items() if r["id"] == ident]
    tables["memories"][key].update({"importance": 5.0, "access_count": -3, "x_tool": [1, 2]})
    path.write_bytes(orjson.dumps(tables))
    before = orjson.loads(path.read_bytes())["memories"]

    assert cli("edit", path, ident, "--content", "changed").code == 0
    assert cli("undo", path).code == 0
    assert orjson.loads(path.read_bytes())["memories"] == before


# -- the Go system's optimistic version moves forward on every change ------------------------


def _versions(path: Path) -> dict[str, int]:
    return {m.id: m.version for m in open_store(str(path)).memories() if m.version is not None}


def test_every_change_memtui_makes_moves_a_longterm_version_forward(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    path = fixture_copy("items.jsonl")
    original = _versions(path)
    plan = path.parent / "plan.json"
    assert cli("plan", path, "--out", plan).code == 0
    assert cli("apply", path, plan, "--yes").code == 0
    applied = _versions(path)
    changed = json.loads(cli("history", path, "--json").out)[0]["memory_ids"]
    assert {i for i in changed if i in original} and all(
        applied[i] == original[i] + 1 for i in changed if i in original
    )
    merged = next(m for m in open_store(str(path)).memories() if m.status.value == "merged")
    assert cli("restore", path, merged.id).code == 0
    assert _versions(path)[merged.id] == applied[merged.id] + 1
    restored = _versions(path)
    assert cli("undo", path).code == 0  # undo brings the content back, never the old version
    assert _versions(path)[merged.id] == restored[merged.id] + 1


def test_undo_redo_undo_on_a_longterm_store(fixture_copy: Callable[[str], Path], cli: Cli) -> None:
    path = fixture_copy("items.jsonl")
    original = open_store(str(path)).get("3").content
    assert cli("edit", path, "3", "--content", "two cups a day").code == 0
    assert cli("undo", path).code == 0  # 2 undoes 1
    assert cli("undo", path, "2").code == 0  # 3 redoes the edit
    assert open_store(str(path)).get("3").content == "two cups a day"
    result = cli("undo", path)  # the edit again, though its images hold older versions
    assert result.code == 0, result.err
    assert open_store(str(path)).get("3").content == original
