"""A clock set back: backups are ordered and pruned by transaction, not by their time."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from memtui.stores import open_store
from tests.conftest import CliResult

Cli = Callable[..., CliResult]


def _edit_at(cli: Cli, monkeypatch: pytest.MonkeyPatch, store: Path, when: str, text: str) -> None:
    monkeypatch.setenv("MEMTUI_NOW", when)
    ident = open_store(str(store)).memories()[0].id
    result = cli("edit", store, ident, "--content", text)
    assert result.code == 0, result.err


@pytest.mark.parametrize("name", ["example-store.json", "realistic-store.json"])
def test_a_clock_set_back_keeps_the_newest_backup_and_rollback_1_goes_before_it(
    fixture_copy: Callable[[str], Path],
    cli: Cli,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    name: str,
) -> None:
    store = fixture_copy(name)
    config = tmp_path / "config.toml"
    config.write_text("[store]\nbackups = 2\n")
    monkeypatch.setenv("MEMTUI_CONFIG", str(config))
    _edit_at(cli, monkeypatch, store, "2026-11-30T10:00:00Z", "first edit")
    _edit_at(cli, monkeypatch, store, "2026-11-30T11:00:00Z", "second edit")
    before_third = store.read_bytes()
    _edit_at(cli, monkeypatch, store, "2026-11-29T09:00:00Z", "third edit, clock set back")

    listed = cli("backups", store)
    assert listed.code == 0, listed.err
    lines = listed.out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("  1 ") and lines[0].endswith("before transaction 3")
    assert lines[1].startswith("  2 ") and lines[1].endswith("before transaction 2")

    assert open_store(str(store)).backups()[0].path.read_bytes() == before_third
    done = cli("rollback", store, "1")
    assert done.code == 0, done.err
    assert open_store(str(store)).memories()[0].content == "second edit"
