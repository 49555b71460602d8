"""Plans on a Claude Code memory folder: no decay (the files hold no importance), and a plan
that says when MEMORY.md would pass what Claude Code loads (200 lines / 25 KB) and which lines
would fall off. Fixtures: tests/fixtures/README.md (claude_code/)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from memtui.engine.planner import make_plan
from memtui.engine.profiles import get_profile
from memtui.model import Memory
from memtui.service import Service
from memtui.stores import Change, open_store
from memtui.stores.file.folder_store import FolderStore
from tests.conftest import FIXTURES, NOW, CliResult

BASIC = FIXTURES / "claude_code" / "basic"
LATER = NOW + timedelta(days=200)
Cli = Callable[..., CliResult]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    dest = tmp_path / "memory"
    shutil.copytree(BASIC, dest)
    for p in dest.rglob("*.md"):
        os.utime(p, (NOW.timestamp() - 86400 * 20, NOW.timestamp() - 86400 * 20))
    return dest


def pad_index(folder: Path, lines: int) -> None:
    """Lines to files the agent deleted long ago (findings memtui leaves alone)."""
    index = folder / "MEMORY.md"
    extra = "".join(f"- [Old note {n}](old_{n}.md) — from before the move\n" for n in range(lines))
    index.write_text(index.read_text(encoding="utf-8") + extra, encoding="utf-8")


def test_a_plan_proposes_no_decay_where_files_hold_no_importance(folder: Path, cli: Cli) -> None:
    store = open_store(str(folder))
    engine_kinds = {
        a.kind for a in make_plan(store.memories(), get_profile("default"), LATER).actions
    }
    assert "decay" in engine_kinds  # what the default profile alone would propose
    result = cli("plan", folder, "--now", LATER.isoformat(), "--json")
    assert result.code == 0, result.err
    kinds = [a["kind"] for a in json.loads(result.out)["actions"]]
    assert "decay" not in kinds and "merge" in kinds


def test_a_plan_says_which_index_lines_still_fall_off(folder: Path, cli: Cli) -> None:
    pad_index(folder, 200)
    before = (folder / "MEMORY.md").read_bytes()
    result = cli("plan", folder, "--now", LATER.isoformat())
    assert result.code == 0, result.err
    lines = len(before.decode().splitlines())
    [note] = [line for line in result.out.splitlines() if line.startswith("MEMORY.md after")]
    # the merge writes into the listed member's file: the index keeps its length
    assert f"MEMORY.md after this plan: {lines} lines" in note
    assert "loads only the first 200 lines or 25 KB" in note
    assert f"so {lines - 200} would fall off (- [Old note 194](old_194.md)" in note
    assert f"before this plan {lines - 200} did" in note
    assert (folder / "MEMORY.md").read_bytes() == before


def test_a_plan_without_index_trouble_says_nothing_of_it(folder: Path, cli: Cli) -> None:
    result = cli("plan", folder, "--now", LATER.isoformat())
    assert result.code == 0, result.err
    assert "MEMORY.md after" not in result.out and "fall off" not in result.out


def test_new_memories_past_line_200_are_named_and_their_apply_refused(folder: Path) -> None:
    index_lines = len((folder / "MEMORY.md").read_text(encoding="utf-8").splitlines())
    pad_index(folder, 200 - index_lines)
    store = open_store(str(folder))
    assert isinstance(store, FolderStore)
    new = [
        Memory(id=f"feedback_new_{n}.md", content=f"Rule {n}.", category="feedback")
        for n in range(3)
    ]
    [note] = store.plan_notes([Change(None, m) for m in new])
    assert note.startswith("MEMORY.md after this plan: 203 lines")
    assert "so 3 would fall off" in note and "feedback_new_0.md" in note
    assert "applying it as proposed is refused" in note


def test_a_plan_kept_in_a_file_keeps_its_note(folder: Path, tmp_path: Path, cli: Cli) -> None:
    pad_index(folder, 200)
    out = tmp_path / "plan.json"
    assert cli("plan", folder, "--now", LATER.isoformat(), "--out", out).code == 0
    store = open_store(str(folder))
    plan = Service().plans.load_plan(str(out), store)
    assert any(w.startswith("MEMORY.md after this plan") for w in plan.warnings)
