"""Plans on Hermes' memory files: no decay (entries carry no importance), a plan whose result
would pass Hermes' character caps says so with the numbers, and a § line inside a fenced code
block is shown as Hermes reads it, with a finding; an entry holding one is refused."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memtui.engine.planner import make_plan
from memtui.engine.profiles import get_profile
from memtui.stores import Change, open_store
from memtui.stores.file.store import Store
from tests.conftest import FIXTURES, CliResult

DELIMITER = "\n§\n"
Cli = Callable[..., CliResult]


def copy(tmp_path: Path, fixture: str) -> Path:
    dest = tmp_path / fixture
    dest.mkdir()
    for name in ("MEMORY.md", "USER.md"):
        shutil.copyfile(FIXTURES / "hermes" / fixture / name, dest / name)
    return dest


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return copy(tmp_path, "near-full")


def tree(folder: Path) -> dict[str, bytes]:
    """The folder's files but Hermes' lock files (0 bytes, made as Hermes makes them)."""
    return {
        p.name: p.read_bytes()
        for p in folder.iterdir()
        if p.is_file() and not p.name.endswith(".lock")
    }


def test_a_plan_proposes_no_decay_for_entries_without_importance(tmp_path: Path, cli: Cli) -> None:
    folder = copy(tmp_path, "basic")
    added = cli("add", folder, "Builds run on the ci-large runners.", "--user", "user")
    assert added.code == 0, added.err
    later = datetime.now(UTC) + timedelta(days=300)
    store = open_store(str(folder))  # the entry's times come back from memtui's ledger
    kinds = {a.kind for a in make_plan(store.memories(), get_profile("default"), later).actions}
    assert "decay" in kinds  # what the default profile alone would propose
    result = cli("plan", folder, "--now", later.isoformat(), "--json")
    assert result.code == 0, result.err
    assert "decay" not in [a["kind"] for a in json.loads(result.out)["actions"]]


def test_a_change_past_the_cap_is_a_note_with_the_numbers(folder: Path) -> None:
    store = open_store(str(folder))
    assert isinstance(store, Store)
    memory = next(m for m in store.memories() if m.user_id == "memory")
    chars = len(DELIMITER.join(e.content for e in store.memories() if e.user_id == "memory"))
    longer = memory.with_(content=memory.content + " and twenty more characters")
    [note] = store.plan_notes([Change(memory, longer)])
    grown = chars + len(" and twenty more characters")
    assert note.startswith(f"MEMORY.md after this plan: {grown:,} of 2,200 characters")
    assert f"past Hermes' cap by {grown - 2200:,}" in note
    assert "applying it as proposed is refused" in note
    assert store.plan_notes([Change(memory, memory.with_(content="short"))]) == []


@pytest.mark.parametrize("opened", ["memories", "memories/MEMORY.md"])
def test_a_plan_on_a_file_over_its_cap_says_how_far_over(
    opened: str, tmp_path: Path, cli: Cli
) -> None:
    folder = tmp_path / "memories"
    folder.mkdir()
    twin = "The staging database is reset every Monday at 03:00 UTC; keep no fixtures there."
    entries = [
        twin,
        "Staging database is reset every Monday 03:00 UTC; don't keep test fixtures there.",
        *(f"Service {n} is deployed from the {n}-release branch by the CI job." for n in range(40)),
    ]
    (folder / "MEMORY.md").write_text(DELIMITER.join(entries), encoding="utf-8")
    (folder / "USER.md").write_text("Prefers short answers.", encoding="utf-8")
    chars = len(DELIMITER.join(entries))
    assert chars > 2200
    result = cli("plan", tmp_path / opened)
    assert result.code == 0, result.err
    [note] = [line for line in result.out.splitlines() if line.startswith("MEMORY.md after")]
    assert "of 2,200 characters, past Hermes' cap by" in note
    assert f"it held {chars:,} before, so applying it is allowed" in note


FENCED = "First note" + DELIMITER + "A snippet:\n```\nline one" + DELIMITER + "line two\n```"


def test_a_section_sign_in_a_fenced_block_reads_as_hermes_reads_it(folder: Path, cli: Cli) -> None:
    (folder / "MEMORY.md").write_text(FENCED, encoding="utf-8")
    store = open_store(str(folder))
    contents = [m.content for m in store.memories() if m.user_id == "memory"]
    assert contents == ["First note", "A snippet:\n```\nline one", "line two\n```"]
    result = cli("doctor", folder)
    assert result.code == 0, result.err
    assert "MEMORY.md line 6: a § line inside a fenced code block" in result.out


def test_an_entry_with_a_fenced_section_sign_is_refused_in_the_folder(
    folder: Path, cli: Cli
) -> None:
    before = tree(folder)
    result = cli("add", folder, "A block:\n```\n§\n```", "--user", "memory")
    assert result.code != 0
    [line] = result.err.strip().splitlines()
    assert "a line with only § (Hermes' delimiter)" in line and "nothing was written" in line
    assert tree(folder) == before


def test_the_hermes_folder_demo_opens_both_files_as_one_store(tmp_path: Path, cli: Cli) -> None:
    folder = tmp_path / "memories"
    made = cli("demo", "--format", "hermes-folder", "--no-tui", "--out", folder)
    assert made.code == 0, made.err
    assert f"demo store: {folder} (14 entries, hermes-folder format" in made.out
    stats = cli("stats", folder)
    assert "users       memory 10, user 4" in stats.out
    before = tree(folder)
    plan = tmp_path / "plan.json"
    assert cli("plan", folder, "--out", plan).code == 0
    applied = cli("apply", folder, plan, "--yes")
    assert applied.code == 0, applied.err
    assert len(open_store(str(folder)).memories()) == 13
    assert cli("undo", folder).code == 0
    assert tree(folder) == before
