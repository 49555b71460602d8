"""Claude Code's auto memory folder as a memtui store: read as Claude Code writes it, changed
in its conventions (a merge rewrites the base's file, removes the members' files and their
index lines), undone byte for byte, refused where Claude Code could not hold the result, and
written all or nothing. Fixtures: tests/fixtures/README.md (claude_code/)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from memtui.errors import ConflictError, MemtuiError
from memtui.model import Memory, Status
from memtui.stores import Change, open_store
from memtui.stores.file.folder_store import FolderStore
from tests.conftest import FIXTURES, NOW, CliResult

BASIC = FIXTURES / "claude_code" / "basic"
Cli = Callable[..., CliResult]


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder`, by its relative name."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    dest = tmp_path / "memory"
    shutil.copytree(BASIC, dest)
    for p in dest.rglob("*.md"):  # written by the agent before the tests' clock (NOW)
        os.utime(p, (NOW.timestamp() - 86400 * 20, NOW.timestamp() - 86400 * 20))
    return dest


def open_folder(path: Path) -> FolderStore:
    store = open_store(str(path))
    assert isinstance(store, FolderStore)
    return store


# -- reading -----------------------------------------------------------------------------------


def test_the_folder_opens_one_entry_per_memory_file(folder: Path) -> None:
    store = open_folder(folder)
    assert store.format_name == "claude-code"
    assert sorted(m.id for m in store.memories()) == sorted(
        p.relative_to(folder).as_posix() for p in folder.rglob("*.md") if p.name != "MEMORY.md"
    )
    db = store.get("feedback_real_db.md")
    assert db.category == "feedback"
    assert db.content.startswith("Integration tests must hit a real database, not mocks.")
    assert "**How to apply:**" in db.content and not db.content.endswith("\n")
    assert db.extra["name"] == "Integration tests hit a real database"
    assert db.extra["hook"].startswith("no mocked DB in integration tests")
    assert db.updated_at is not None and db.user_id is None
    assert store.get("reference_linear.md").category == "reference"  # nested metadata.type
    assert store.get("project_merge_freeze.md").extra["description"].startswith("Non-critical")
    assert store.get("team/project_oncall.md").category == "project"


def test_its_index_and_the_folder_name_the_same_store(folder: Path) -> None:
    by_index = open_folder(folder / "MEMORY.md")
    assert by_index.path == folder
    assert [m.id for m in by_index.memories()] == [m.id for m in open_folder(folder).memories()]


def test_index_lines_to_no_file_and_unlisted_files_are_findings(folder: Path) -> None:
    assert open_folder(folder).findings() == [
        "MEMORY.md line 6 points at deploy_notes.md, which does not exist",
        "feedback_terse_2.md is not listed in MEMORY.md (Claude Code will not see it)",
        "team/project_oncall.md is not listed in MEMORY.md (Claude Code will not see it)",
    ]


def test_stats_and_doctor_show_the_findings(folder: Path, cli: Cli) -> None:
    before = tree(folder)
    stats = cli("stats", folder)
    assert stats.code == 0
    assert "claude-code store" in stats.out
    assert "MEMORY.md line 6 points at deploy_notes.md, which does not exist" in stats.out
    doctor = cli("doctor", folder)
    assert "feedback_terse_2.md is not listed in MEMORY.md" in doctor.out + doctor.err
    assert tree(folder) == before


# -- changing ----------------------------------------------------------------------------------


def test_an_edit_splices_only_the_changed_value(folder: Path) -> None:
    store = open_folder(folder)
    freeze = store.get("project_merge_freeze.md")
    changed = freeze.with_(extra={**freeze.extra, "description": "No merges: release cut"})
    store.commit([Change(freeze, changed)], actor="user", kind="edit", reason="t", now=NOW)
    old = (BASIC / "project_merge_freeze.md").read_text().splitlines(keepends=True)
    new = (folder / "project_merge_freeze.md").read_text().splitlines(keepends=True)
    assert [n for n, (a, b) in enumerate(zip(old, new, strict=True)) if a != b] == [2]
    assert new[2] == 'description: "No merges: release cut"\n'  # quoted as the line was
    assert "originSessionId: 4f1c2a9e" in "".join(new)  # an unknown key kept
    assert (folder / "MEMORY.md").read_bytes() == (BASIC / "MEMORY.md").read_bytes()
    assert open_folder(folder).get(freeze.id).extra["description"] == "No merges: release cut"


def test_open_edit_merge_undo_gives_back_every_file_byte_for_byte(folder: Path) -> None:
    original = tree(folder)
    store = open_folder(folder)
    terse = store.get("feedback_terse.md")
    edited = terse.with_(
        content=terse.content + "\n\nApplies to commit messages too.",
        extra={**terse.extra, "name": "No recaps", "hook": "no recap at the end of replies"},
    )
    store.commit([Change(terse, edited)], actor="user", kind="edit", reason="edit", now=NOW)
    assert (
        "- [No recaps](feedback_terse.md) — no recap at the end of replies\n"
        in (folder / "MEMORY.md").read_text()
    )
    assert "# added by hand: keep this one" in (folder / "feedback_terse.md").read_text()

    store = open_folder(folder)
    base, member = store.get("feedback_terse.md"), store.get("feedback_real_db.md")
    merged = base.with_(content=base.content + "\n\nAnd integration tests use a real database.")
    store.commit(
        [
            Change(base, merged),
            Change(member, member.with_(status=Status.MERGED, superseded_by=base.id)),
        ],
        actor="user",
        kind="merge",
        reason="merge",
        now=NOW,
    )
    assert not (folder / "feedback_real_db.md").exists()  # the member's file is removed
    index = (folder / "MEMORY.md").read_text()
    assert "feedback_real_db.md" not in index
    # every other index line is as it was
    kept = [line for line in original["MEMORY.md"].decode().splitlines() if "real_db" not in line]
    assert [line for line in index.splitlines() if "terse.md" not in line] == [
        line for line in kept if "terse.md" not in line
    ]

    store = open_folder(folder)
    store.undo(now=NOW)
    store.undo(now=NOW)
    assert tree(folder) == original


def test_a_new_memory_gets_its_file_and_an_index_line(folder: Path) -> None:
    store = open_folder(folder)
    ident = store.new_id(NOW)
    memory = Memory(
        id=ident,
        content="Use `uv run` for every script.",
        category="feedback",
        extra={"name": "uv for scripts", "description": "run scripts with uv"},
        created_at=NOW,
    )
    store.commit([Change(None, memory)], actor="user", kind="add", reason="t", now=NOW)
    text = (folder / ident).read_text()
    assert text == (
        "---\nname: uv for scripts\ndescription: run scripts with uv\ntype: feedback\n---\n\n"
        "Use `uv run` for every script.\n"
    )
    index = (folder / "MEMORY.md").read_text()
    assert index.startswith((BASIC / "MEMORY.md").read_text())
    assert index.endswith(f"- [uv for scripts]({ident}) — run scripts with uv\n")


def test_an_index_past_200_lines_is_refused_with_the_lines_that_would_fall_off(
    folder: Path,
) -> None:
    index = folder / "MEMORY.md"
    index.write_text(
        index.read_text() + "".join(f"- note {n}\n" for n in range(200 - 6)), encoding="utf-8"
    )
    before = tree(folder)
    store = open_folder(folder)
    assert not any("past what Claude Code loads" in f for f in store.findings())
    new = [
        Memory(id=f"feedback_new_{n}.md", content=f"Rule {n}.", category="feedback")
        for n in range(2)
    ]
    with pytest.raises(MemtuiError) as refused:
        store.commit([Change(None, m) for m in new], actor="user", kind="add", reason="", now=NOW)
    message = str(refused.value)
    assert "MEMORY.md would have 202 lines" in message
    assert "loads only the first 200 lines" in message and "2 would fall off" in message
    assert "feedback_new_0.md" in message and message.endswith("nothing was written")
    assert tree(folder) == before


def test_an_outside_change_to_another_file_is_rebased_to_the_same_file_refused(
    folder: Path,
) -> None:
    store = open_folder(folder)
    role, linear = store.get("user_role.md"), store.get("reference_linear.md")
    agent_text = (folder / "user_role.md").read_text() + "Prefers pandas over polars.\n"
    (folder / "user_role.md").write_text(agent_text, encoding="utf-8")
    store.commit(
        [Change(linear, linear.with_(content="Pipeline bugs: Linear INGEST."))],
        actor="user",
        kind="edit",
        reason="",
        now=NOW,
    )
    assert (folder / "user_role.md").read_text() == agent_text  # the agent's change stays
    assert "Pipeline bugs: Linear INGEST." in (folder / "reference_linear.md").read_text()
    before = tree(folder)
    with pytest.raises(ConflictError, match="changed since memtui read it"):
        store.commit(
            [Change(role, role.with_(content="x"))], actor="user", kind="edit", reason="", now=NOW
        )
    assert tree(folder) == before


# -- bad input: one line, nothing written ------------------------------------------------------


def _refused(cli: Cli, path: Path, needle: str) -> None:
    watched = path if path.is_dir() else path.parent
    before = tree(watched.parent)
    result = cli("stats", path)
    assert result.code != 0
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], result.err
    assert "Traceback" not in result.err
    assert tree(watched.parent) == before


def test_a_folder_of_unrelated_markdown_is_refused(tmp_path: Path, cli: Cli) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "intro.md").write_text("# Intro\n\nSome prose.\n", encoding="utf-8")
    (docs / "usage.md").write_text("Usage: run it.\n", encoding="utf-8")
    _refused(cli, docs, "not a Claude Code memory folder")


def test_a_file_with_broken_frontmatter_is_refused(folder: Path, cli: Cli) -> None:
    (folder / "feedback_broken.md").write_text(
        "---\nname: Broken\ntype: feedback\n\nNo closing fence.\n", encoding="utf-8"
    )
    _refused(cli, folder, "feedback_broken.md: the frontmatter opened on line 1 is never closed")


def test_frontmatter_memtui_does_not_read_is_refused(folder: Path, cli: Cli) -> None:
    (folder / "feedback_block.md").write_text(
        "---\nname: Block\ndescription: >\n  folded\ntype: feedback\n---\n\nBody.\n",
        encoding="utf-8",
    )
    _refused(cli, folder, "feedback_block.md: line 3 of the frontmatter holds YAML")


def test_a_symlinked_memory_file_is_refused(folder: Path, tmp_path: Path, cli: Cli) -> None:
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("---\nname: x\ntype: user\n---\n\nx\n", encoding="utf-8")
    os.symlink(elsewhere, folder / "user_linked.md")
    _refused(cli, folder, "user_linked.md: is a symbolic link")


def test_a_10_mb_memory_file_is_refused(folder: Path, cli: Cli) -> None:
    (folder / "project_huge.md").write_bytes(
        b"---\nname: huge\ntype: project\n---\n\n" + b"x" * 10_000_000
    )
    _refused(cli, folder, "project_huge.md: 10,000,034 bytes")


def test_a_merge_by_hand_rewrites_the_base_file_and_undo_brings_all_back(
    folder: Path, cli: Cli
) -> None:
    original = tree(folder)
    merged = cli("merge", folder, "feedback_terse.md", "feedback_terse_2.md")
    assert merged.code == 0, merged.err
    after = tree(folder)
    # one of the two files holds the merged memory, under its own frontmatter; the other is gone
    [kept] = [n for n in ("feedback_terse.md", "feedback_terse_2.md") if n in after]
    gone = ({"feedback_terse.md", "feedback_terse_2.md"} - {kept}).pop()
    text = after[kept].decode()
    assert "Don't summarize what you just did" in text
    # the listed file is kept (Claude Code sees the merged memory), its own lines with it
    assert kept == "feedback_terse.md" and "# added by hand: keep this one" in text
    assert f"({gone})" not in after["MEMORY.md"].decode()
    assert f"]({kept}) — no summaries at the end of replies\n" in after["MEMORY.md"].decode()
    assert set(after) == set(original) - {gone}
    store = open_folder(folder)
    assert len(store) == len(open_folder(folder)) == 6
    assert cli("undo", folder).code == 0
    assert tree(folder) == original


def test_a_plan_applied_and_undone_gives_back_every_file(
    folder: Path, tmp_path: Path, cli: Cli
) -> None:
    original = tree(folder)
    plan = tmp_path / "plan.json"
    made = cli("plan", folder, "--out", plan)
    assert made.code == 0, made.err
    applied = cli("apply", folder, plan, "--yes")
    assert applied.code == 0, applied.err
    after = tree(folder)
    assert "feedback_terse_2.md" not in after  # the plan's merge removed the member's file
    assert "feedback_terse.md" in after and "(feedback_terse.md)" in after["MEMORY.md"].decode()
    assert cli("undo", folder).code == 0
    assert tree(folder) == original


async def test_the_tui_opens_the_folder_and_shows_the_findings_in_its_header(
    folder: Path,
) -> None:
    from memtui.config import Settings
    from memtui.tui import make_app

    app = make_app(str(folder), Settings(), now=NOW, watch_interval=0)  # type: ignore[arg-type]
    async with app.run_test(size=(120, 32)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        status = str(app.query_one("#status").render())
        assert "(claude-code)" in status and "7 entries" in status
        assert app.sub_title.endswith("· claude-code · 3 findings")


def test_the_demo_writes_a_claude_code_folder_with_what_memtui_is_for(
    tmp_path: Path, cli: Cli
) -> None:
    out = tmp_path / "memory"
    made = cli("demo", "--format", "claude-code", "--out", out, "--no-tui")
    assert made.code == 0, made.err
    assert f"demo store: {out} (8 memory files, claude-code format)" in made.out
    store = open_folder(out)
    assert "MEMORY.md line 7 points at deploy_notes.md, which does not exist" in store.findings()
    feedback = [m for m in store.memories() if m.category == "feedback"]
    assert any("**Why:**" in m.content and "**How to apply:**" in m.content for m in feedback)
    pairs = cli("pairs", out)
    assert "feedback_no_recap.md  feedback_no_summaries.md" in pairs.out  # the near-duplicates
    again = cli("demo", "--format", "claude-code", "--out", tmp_path, "--no-tui")
    assert again.code != 0 and "is not empty" in again.err


def test_an_index_already_past_200_lines_is_a_finding(folder: Path) -> None:
    index = folder / "MEMORY.md"
    index.write_text(index.read_text() + "".join(f"- note {n}\n" for n in range(230)))
    assert (
        "MEMORY.md is past what Claude Code loads (200 lines or 25 KB): 36 lines never reach "
        "the agent, from '- note 194'"
    ) in open_folder(folder).findings()
