"""A look reads and writes only the head of the last seen state (`seen-head.json`): the line
`memtui stats` prints is the same as when the whole state is read, the time of the last look
moves on each look, and a missing or stale head (a state written by an older memtui) only
means the whole state is read again."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult

Cli = Callable[..., CliResult]


def _agent_rewrites_first(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["memories"][0]["content"] = "rewritten by the agent"
    tmp = path.with_name(path.name + ".agent")
    tmp.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


def test_each_look_moves_the_time_of_the_last_look_without_rewriting_the_state(
    fixture_copy: Callable[[str], Path], cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = fixture_copy("example-store.json")
    seen = path.with_name(path.name + ".memtui") / "seen.json.gz"
    cli("stats", path)
    state = seen.read_bytes(), seen.stat().st_mtime_ns
    monkeypatch.setenv("MEMTUI_NOW", "2026-12-01T08:30:00Z")
    assert "since you last looked (2026-11-30 12:00): the agent changed nothing" in (
        cli("stats", path).out
    )
    monkeypatch.setenv("MEMTUI_NOW", "2026-12-02T09:00:00Z")
    assert "since you last looked (2026-12-01 08:30): the agent changed nothing" in (
        cli("stats", path).out
    )
    assert (seen.read_bytes(), seen.stat().st_mtime_ns) == state  # the store did not change
    _agent_rewrites_first(path)
    monkeypatch.setenv("MEMTUI_NOW", "2026-12-03T10:00:00Z")
    assert "since you last looked (2026-12-02 09:00): the agent added 0, changed 1, removed 0" in (
        cli("stats", path).out
    )
    assert json.loads(cli("stats", path, "--json").out)["since_last_looked"] == {
        "looked_at": "2026-12-03T10:00:00Z",
        "added": 0,
        "changed": 0,
        "removed": 0,
    }


@pytest.mark.parametrize("head", ["missing", "stale", "damaged"])
def test_without_a_usable_head_the_whole_state_is_read_and_nothing_is_missed(
    fixture_copy: Callable[[str], Path], cli: Cli, head: str
) -> None:
    path = fixture_copy("example-store.json")
    folder = path.with_name(path.name + ".memtui")
    cli("stats", path)
    head_file = folder / "seen-head.json"
    if head == "missing":  # as an older memtui left the record
        head_file.unlink()
    elif head == "stale":  # the state rewritten by an older memtui, the head left behind
        seen = folder / "seen.json.gz"
        data = seen.read_bytes()
        seen.unlink()
        seen.write_bytes(data)
    else:
        head_file.write_text("{not json", encoding="utf-8")
    _agent_rewrites_first(path)
    shown = cli("stats", path)
    assert "since you last looked (2026-11-30 12:00): the agent added 0, changed 1, removed 0" in (
        shown.out
    )
    assert json.loads(head_file.read_text(encoding="utf-8"))["looked_event"] == 1
    again = cli("stats", path)
    assert "since you last looked (2026-11-30 12:00): the agent changed nothing" in again.out
