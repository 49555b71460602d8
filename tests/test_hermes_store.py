"""Hermes Agent's memory files (MEMORY.md, USER.md) as memtui stores: read as Hermes reads
them, written as Hermes writes them, refused where Hermes could not hold the result, and
written under Hermes' own lock. Fixtures made by Hermes' own code (tests/fixtures/README.md)."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtui.errors import ConflictError
from memtui.stores import Change, open_store
from memtui.stores.formats import hermes as hermes_format
from tests.conftest import FIXTURES, NOW, CliResult
from tests.forked import Forked

HERMES = FIXTURES / "hermes"
DELIMITER = "\n§\n"
LIMITS = {"MEMORY.md": 2200, "USER.md": 1375}
DRIFT = json.loads((HERMES / "drift" / "results.json").read_text(encoding="utf-8"))

Cli = Callable[..., CliResult]


# -- Hermes' own rules, re-implemented from tools/memory_tool.py ------------------------------


def hermes_read(path: Path) -> list[str]:
    """`_read_file` and the load-time dedupe (read_text: UTF-8, universal newlines)."""
    raw = path.read_text(encoding="utf-8")
    if not raw.strip():
        return []
    entries = [e.strip() for e in raw.split(DELIMITER)]
    return list(dict.fromkeys(e for e in entries if e))


def hermes_guard_accepts(path: Path) -> bool:
    """`_detect_external_drift`: whether Hermes' next replace/remove rewrites this file."""
    raw = path.read_text(encoding="utf-8")
    if not raw.strip():
        return True
    parsed = [e.strip() for e in raw.split(DELIMITER) if e.strip()]
    limit = LIMITS.get(path.name, 2200)
    return raw.strip() == DELIMITER.join(parsed) and max(map(len, parsed)) <= limit


def assert_hermes_written(path: Path) -> None:
    """The file is exactly what Hermes' `_write_file` writes for its entries."""
    assert hermes_guard_accepts(path)
    assert path.read_bytes() == DELIMITER.join(hermes_read(path)).encode("utf-8")
    assert os.stat(path).st_mode & 0o777 == 0o600


# -- helpers -----------------------------------------------------------------------------------


@pytest.fixture
def memories(tmp_path: Path) -> Callable[[str, str], Path]:
    """A writable copy of a Hermes fixture under its own name in a `memories` folder."""

    def copy(source: str, name: str = "") -> Path:
        folder = tmp_path / "memories"
        folder.mkdir(exist_ok=True)
        dest = folder / (name or Path(source).name)
        shutil.copyfile(HERMES / source, dest)
        dest.chmod(0o600)
        return dest

    return copy


def entry_id(path: Path, needle: str) -> str:
    [memory] = [m for m in open_store(str(path)).memories() if needle in m.content]
    return memory.id


ALL_FIXTURES = [
    *(f"{d}/{n}" for d in ("basic", "near-full", "edited") for n in ("MEMORY.md", "USER.md")),
    *sorted(
        f"drift/{p.name}" for p in (HERMES / "drift").glob("*.input.md") if "15-" not in p.name
    ),
]


# -- reading -----------------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", ALL_FIXTURES)
def test_every_fixture_opens_with_the_entries_hermes_reads(
    fixture: str, memories: Callable[..., Path]
) -> None:
    name = fixture.rsplit("/", 1)[1] if not fixture.startswith("drift/") else "MEMORY.md"
    path = memories(fixture, name)
    store = open_store(str(path))
    assert store.format_name == "hermes"
    assert [m.content for m in store.memories()] == hermes_read(path)
    user = "user" if name == "USER.md" else "memory"
    assert {(m.user_id, m.category) for m in store.memories()} <= {
        (user, "identity" if user == "user" else "fact")
    }
    assert [m.id for m in open_store(str(path)).memories()] == [m.id for m in store.memories()]


def test_the_basic_fixture_shows_its_multi_line_chinese_and_inline_section_entries(
    memories: Callable[..., Path],
) -> None:
    store = open_store(str(memories("basic/MEMORY.md")))
    texts = [m.content for m in store.memories()]
    assert len(texts) == 6
    assert texts[1].splitlines() == [
        "Deploy checklist:",
        "- bump version in pyproject.toml",
        "- tag the release",
        "- push tags to origin",
    ]
    assert texts[2] == "项目代码使用中文注释，提交信息用英文。"
    assert texts[3] == "Contract clause § 4.2 caps liability; quote the § sign exactly as written."


def test_a_text_file_without_the_delimiter_is_not_claimed(tmp_path: Path, cli: Cli) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nNothing § here is a delimiter line.\n")
    result = cli("list", notes)
    assert result.code != 0
    assert "not valid JSON" in result.err and "hermes" not in result.out
    delimited = tmp_path / "saved.md"
    delimited.write_text("One note.\n§\nAnother note.")
    assert open_store(str(delimited)).format_name == "hermes"


def test_an_emptied_file_opens_with_no_entries(tmp_path: Path, cli: Cli) -> None:
    path = tmp_path / "USER.md"
    path.write_bytes(b"")
    result = cli("stats", path)
    assert result.code == 0
    assert "(hermes store)" in result.out and "entries     0" in result.out


# -- writing as Hermes writes ------------------------------------------------------------------


def test_edit_merge_and_undo_give_back_both_files_byte_for_byte(
    memories: Callable[..., Path], cli: Cli
) -> None:
    for fixture in ("basic/MEMORY.md", "basic/USER.md"):
        path = memories(fixture)
        original = path.read_bytes()
        first, *rest = open_store(str(path)).memories()
        assert cli("edit", path, first.id, "--content", first.content + " (checked)").code == 0
        assert_hermes_written(path)
        assert hermes_read(path)[0] == first.content + " (checked)"
        # the edited entry keeps its id on the next open, so the merge and undo find it
        ids = [m.id for m in open_store(str(path)).memories()]
        assert ids[0] == first.id
        merged = cli("merge", path, ids[0], ids[1], "--content", "Merged: both facts in one.")
        assert merged.code == 0, merged.err
        assert_hermes_written(path)
        assert "Merged: both facts in one." in hermes_read(path)
        assert len(hermes_read(path)) == len(rest)
        assert cli("undo", path).code == 0
        assert_hermes_written(path)
        assert cli("undo", path).code == 0
        assert path.read_bytes() == original


def test_memtui_writes_what_hermes_writes_for_the_same_change(
    memories: Callable[..., Path], cli: Cli
) -> None:
    """Replace, remove and add on Hermes' drift inputs it rewrites give Hermes' own bytes."""
    accepted = [case for case, r in DRIFT.items() if r.get("replace", {}).get("file_changed")]
    assert len(accepted) >= 10
    for case in accepted:
        for op in ("replace", "remove", "add"):
            path = memories(f"drift/{case}.input.md", "MEMORY.md")
            if op == "replace":
                ident = entry_id(path, "Beta")
                result = cli("edit", path, ident, "--content", "Beta fact, revised.")
            elif op == "remove":
                ident = entry_id(path, "Gamma")
                result = cli("edit", path, ident, "--status", "deleted")
            else:
                result = cli("add", path, "Delta fact.")
            assert result.code == 0, (case, op, result.err)
            expected = (HERMES / "drift" / f"{case}.after-{op}.md").read_bytes()
            assert path.read_bytes() == expected, (case, op)
            assert_hermes_written(path)
            path.unlink()
            shutil.rmtree(path.with_name("MEMORY.md.memtui"))


@pytest.mark.parametrize(
    "case",
    [
        "07-blank-lines-around-delim",
        "08-trailing-space-on-entry",
        "09-empty-entry-double-delim",
        "10-trailing-delimiter",
    ],
)
def test_a_layout_hermes_refuses_to_rewrite_is_refused_with_its_line(
    case: str, memories: Callable[..., Path], cli: Cli
) -> None:
    assert DRIFT[case]["replace"]["result"]["success"] is False  # Hermes refuses it too
    path = memories(f"drift/{case}.input.md", "MEMORY.md")
    before = path.read_bytes()
    result = cli("add", path, "Delta fact.")
    assert result.code != 0
    [line] = result.err.strip().splitlines()
    assert "not in the layout Hermes writes (near line" in line and "nothing was written" in line
    assert path.read_bytes() == before
    assert open_store(str(path)).transactions() == []


def test_an_entry_over_the_cap_can_be_removed_but_nothing_added(
    memories: Callable[..., Path], cli: Cli
) -> None:
    path = memories("drift/14-oversized-entry.input.md", "MEMORY.md")
    before = path.read_bytes()
    result = cli("add", path, "Delta fact.")
    assert result.code != 0
    assert "MEMORY.md would hold 2,341 of 2,200 characters" in result.err
    assert path.read_bytes() == before
    big = max(open_store(str(path)).memories(), key=lambda m: len(m.content))
    assert cli("edit", path, big.id, "--status", "deleted").code == 0
    assert_hermes_written(path)
    assert cli("undo", path).code == 0
    assert path.read_bytes() == before


def test_a_crlf_file_is_written_with_lf_and_undo_gives_its_bytes_back(
    memories: Callable[..., Path], cli: Cli
) -> None:
    path = memories("drift/05-crlf.input.md", "MEMORY.md")
    before = path.read_bytes()
    assert b"\r\n" in before
    assert cli("edit", path, entry_id(path, "Beta"), "--content", "Beta fact, revised.").code == 0
    assert b"\r" not in path.read_bytes()
    assert_hermes_written(path)
    assert cli("undo", path).code == 0
    assert path.read_bytes() == before


def test_removing_the_last_entry_leaves_a_0_byte_file_with_mode_0600(
    tmp_path: Path, cli: Cli
) -> None:
    path = tmp_path / "USER.md"
    path.write_bytes(b"Name: Ada.")
    path.chmod(0o600)
    [only] = open_store(str(path)).memories()
    assert cli("edit", path, only.id, "--status", "deleted").code == 0
    assert path.read_bytes() == b""
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert cli("undo", path).code == 0
    assert path.read_bytes() == b"Name: Ada."


# -- what Hermes cannot hold is refused before writing -----------------------------------------


@pytest.mark.parametrize(
    ("name", "now", "cap"), [("MEMORY.md", 2190, 2200), ("USER.md", 1365, 1375)]
)
def test_the_cap_is_counted_as_hermes_counts_equal_allowed_one_over_refused(
    name: str, now: int, cap: int, memories: Callable[..., Path], cli: Cli
) -> None:
    path = memories(f"near-full/{name}")
    assert len(DELIMITER.join(hermes_read(path))) == now
    before = path.read_bytes()
    over = cli("add", path, "中" * (cap - now - 3 + 1))
    assert over.code != 0
    [line] = over.err.strip().splitlines()
    assert f"{name} would hold {cap + 1:,} of {cap:,} characters" in line
    assert path.read_bytes() == before
    assert cli("add", path, "中" * (cap - now - 3)).code == 0
    assert len(DELIMITER.join(hermes_read(path))) == cap
    assert_hermes_written(path)


def test_an_edit_that_would_pass_the_cap_is_refused(
    memories: Callable[..., Path], cli: Cli
) -> None:
    path = memories("near-full/MEMORY.md")
    before = path.read_bytes()
    first = open_store(str(path)).memories()[0]
    longer = first.content + " — and eleven more words that push the file past its cap"
    result = cli("edit", path, first.id, "--content", longer)
    assert result.code != 0
    grown = 2190 + len(longer) - len(first.content)
    assert f"MEMORY.md would hold {grown:,} of 2,200 characters" in result.err
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "content",
    [
        "first half\n§\nsecond half",
        "ends on a delimiter\n§",
        "§\nstarts on one",
        "A fenced block:\n```\n§\n```",
    ],
)
def test_an_entry_holding_the_delimiter_is_refused(
    content: str, memories: Callable[..., Path], cli: Cli
) -> None:
    path = memories("basic/MEMORY.md")
    before = path.read_bytes()
    result = cli("add", path, content)
    assert result.code != 0
    [line] = result.err.strip().splitlines()
    assert "a line with only § (Hermes' delimiter)" in line and "two entries" in line
    assert path.read_bytes() == before


def test_two_entries_with_the_same_text_are_refused(
    memories: Callable[..., Path], cli: Cli
) -> None:
    path = memories("basic/USER.md")
    before = path.read_bytes()
    first = hermes_read(path)[0]
    result = cli("add", path, first + "  ")  # Hermes strips it: the same text
    assert result.code != 0
    assert "two entries would hold the same text" in result.err
    assert path.read_bytes() == before


# -- bad input: one line, nothing written ------------------------------------------------------


def test_bad_input_is_one_line_and_nothing_is_written(
    memories: Callable[..., Path], tmp_path: Path, cli: Cli
) -> None:
    latin = memories("drift/15-latin1-section-sign.input.md", "MEMORY.md")
    folder = tmp_path / "dir" / "USER.md"
    folder.mkdir(parents=True)
    huge = tmp_path / "big" / "MEMORY.md"
    huge.parent.mkdir()
    huge.write_bytes(("A long note. " * 80 + "\n§\n").encode() * 9_900)
    assert huge.stat().st_size > 10_000_000
    for path, words in (
        (latin, "not valid UTF-8 (byte 0xA7 at offset 12)"),
        (folder, "is a directory"),
        (huge, "far more than a Hermes memory file holds"),
    ):
        before = path.read_bytes() if path.is_file() else None
        for args in (("list", path), ("add", path, "x")):
            result = cli(*args)
            assert result.code != 0
            [line] = result.err.strip().splitlines()
            assert str(path) in line and words in line and "Traceback" not in result.err
        if before is not None:
            assert path.read_bytes() == before
        assert not path.with_name(path.name + ".memtui").exists()


# -- Hermes' lock ------------------------------------------------------------------------------


@pytest.fixture
def hermes_holding(tmp_path: Path) -> Iterator[Callable[[Path], subprocess.Popen[str]]]:
    """Another process that holds Hermes' flock on `<file>.lock` until its stdin closes."""
    started: list[subprocess.Popen[str]] = []

    def hold(path: Path) -> subprocess.Popen[str]:
        code = (
            "import fcntl, sys\n"
            f"f = open({str(path) + '.lock'!r}, 'a+', encoding='utf-8')\n"
            "fcntl.flock(f, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\n"
            "sys.stdin.read()\n"
        )
        proc = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert proc.stdout is not None and proc.stdout.readline() == "held\n"
        started.append(proc)
        return proc

    yield hold
    for proc in started:
        if proc.poll() is None:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait()


def test_a_write_waits_for_hermes_lock_and_fails_with_one_line(
    memories: Callable[..., Path],
    cli: Cli,
    hermes_holding: Callable[[Path], subprocess.Popen[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(hermes_format, "HERMES_LOCK_WAIT_S", 0.2)
    path = memories("basic/MEMORY.md")
    before = path.read_bytes()
    holder = hermes_holding(path)
    lock = path.with_name("MEMORY.md.lock")
    inode = lock.stat().st_ino
    result = cli("add", path, "A new fact.")
    assert result.code != 0
    [line] = result.err.strip().splitlines()
    assert "Hermes Agent is writing it (another process holds MEMORY.md.lock)" in line
    assert "nothing was written" in line
    assert path.read_bytes() == before
    assert open_store(str(path)).transactions() == []
    assert holder.stdin is not None
    holder.stdin.close()
    holder.wait()
    assert cli("add", path, "A new fact.").code == 0
    assert hermes_read(path)[-1] == "A new fact."
    # memtui's own lock has its own name: Hermes' lock file is the same 0-byte file
    assert lock.stat().st_ino == inode and lock.stat().st_size == 0
    assert not path.with_name("MEMORY.md.memtui.lock").exists()


# -- the CLI -----------------------------------------------------------------------------------


def test_stats_and_list_show_a_hermes_file(memories: Callable[..., Path], cli: Cli) -> None:
    path = memories("edited/USER.md")
    stats = cli("stats", path)
    assert stats.code == 0
    assert "(hermes store)" in stats.out
    assert f"entries     {len(hermes_read(path))}" in stats.out
    assert "users       user" in stats.out and "category    identity" in stats.out
    listed = cli("list", path)
    assert listed.code == 0
    for text in hermes_read(path):
        assert text.splitlines()[0][:40] in listed.out


def test_an_entry_memtui_added_or_edited_keeps_its_id_and_time_on_the_next_open(
    memories: Callable[..., Path], cli: Cli
) -> None:
    path = memories("basic/USER.md")
    assert cli("add", path, "Prefers short answers.").code == 0
    added = open_store(str(path)).memories()[-1]
    assert added.content == "Prefers short answers."
    assert added.created_at == NOW and added.updated_at == NOW
    assert cli("edit", path, added.id, "--content", "Prefers short, direct answers.").code == 0
    again = open_store(str(path)).get(added.id)
    assert again.content == "Prefers short, direct answers." and again.created_at == NOW
    agent_only = open_store(str(path)).memories()[0]
    assert agent_only.created_at is None and agent_only.id.startswith("h")


# -- the demo ----------------------------------------------------------------------------------


def test_the_hermes_demo_is_what_hermes_writes_with_a_pair_to_merge(
    tmp_path: Path, cli: Cli
) -> None:
    folder = tmp_path / "memories"
    made = cli("demo", "--format", "hermes", "--no-tui", "--out", folder)
    assert made.code == 0, made.err
    assert "hermes format" in made.out
    memory, user = folder / "MEMORY.md", folder / "USER.md"
    for path in (memory, user):
        assert_hermes_written(path)
        assert len(DELIMITER.join(hermes_read(path))) <= LIMITS[path.name]
    texts = hermes_read(memory)
    assert any("\n" in t for t in texts) and any("项目" in t for t in texts)
    pairs = cli("pairs", memory)
    assert pairs.code == 0
    [pair] = pairs.out.strip().splitlines()
    assert pair.count("~/code/atlas") == 2
    before = memory.read_bytes()
    plan = tmp_path / "plan.json"
    assert cli("plan", memory, "--out", plan).code == 0
    applied = cli("apply", memory, plan, "--yes")
    assert applied.code == 0, applied.err
    assert len(hermes_read(memory)) == len(texts) - 1
    assert_hermes_written(memory)
    assert cli("undo", memory).code == 0
    assert memory.read_bytes() == before
    again = cli("demo", "--format", "hermes", "--no-tui", "--out", folder)
    assert again.code != 0 and "exists" in again.err
    assert memory.read_bytes() == before


# -- Hermes writing while memtui has the file open ---------------------------------------------


def hermes_add(path: Path, text: str) -> None:
    """What Hermes' `add` leaves on disk: the entries it reads, plus one, in its layout."""
    path.write_bytes(DELIMITER.join([*hermes_read(path), text]).encode("utf-8"))


def test_an_entry_hermes_added_meanwhile_is_kept_and_one_it_rewrote_is_a_conflict(
    memories: Callable[..., Path], cli: Cli
) -> None:
    path = memories("basic/MEMORY.md")
    store = open_store(str(path))
    first, second = store.memories()[:2]
    hermes_add(path, "Hermes learned this meanwhile.")
    store.commit(
        [Change(first, first.with_(content="Edited in memtui."))],
        actor="user",
        kind="edit",
        reason="test",
        now=NOW,
    )
    assert hermes_read(path)[0] == "Edited in memtui."
    assert hermes_read(path)[-1] == "Hermes learned this meanwhile."
    assert_hermes_written(path)
    entries = hermes_read(path)
    entries[1] = "Hermes rewrote the checklist."
    path.write_bytes(DELIMITER.join(entries).encode("utf-8"))
    before = path.read_bytes()
    with pytest.raises(ConflictError, match="changed since memtui read it"):
        store.commit([Change(second, None)], actor="user", kind="edit", reason="test", now=NOW)
    assert path.read_bytes() == before


async def test_the_tui_shows_a_hermes_file(memories: Callable[..., Path]) -> None:
    from memtui.config import Settings
    from memtui.tui import make_app

    path = memories("basic/MEMORY.md")
    app = make_app(str(path), Settings(), now=NOW, watch_interval=0)
    async with app.run_test(size=(140, 30)) as pilot:
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        status = str(app.query_one("#status").render())
        assert "6 entries" in status and "(hermes)" in status
        screen = "\n".join(
            app.query_one("MemoryTable").render_line(row).text  # type: ignore[attr-defined]
            for row in range(8)
        )
        assert "User's project" in screen and "项目代码" in screen and "Deploy checklist" in screen


def test_rollback_of_user_md_changes_only_what_the_backup_differs_in(
    memories: Callable[..., Path], cli: Cli
) -> None:
    path = memories("basic/USER.md")
    original = path.read_bytes()
    first = open_store(str(path)).memories()[0]
    assert cli("edit", path, first.id, "--content", "Name: someone else.").code == 0
    [backup] = open_store(str(path)).backups()
    rolled = cli("rollback", path, backup.name)
    assert rolled.code == 0, rolled.err
    assert "1 entries changed" in rolled.out
    assert path.read_bytes() == original
    assert {m.user_id for m in open_store(str(path)).memories()} == {"user"}


def test_a_symlinked_file_is_read_locked_and_written_where_it_points(
    memories: Callable[..., Path], tmp_path: Path, cli: Cli
) -> None:
    path = memories("basic/USER.md")
    link = tmp_path / "profile-link"
    link.symlink_to(path)
    assert open_store(str(link)).memories()[0].user_id == "user"
    first = open_store(str(link)).memories()[0]
    assert cli("edit", link, first.id, "--content", "Name: Ada.").code == 0
    assert link.is_symlink() and hermes_read(path)[0] == "Name: Ada."
    assert path.with_name("USER.md.lock").exists() and path.with_name("USER.md.memtui").is_dir()
    assert not (tmp_path / "profile-link.memtui").exists()


@pytest.mark.parametrize(
    ("flag", "value", "field"),
    [("--importance", "0.3", "importance"), ("--tags", "a,b", "tags")],
)
def test_a_field_hermes_cannot_hold_is_refused_not_recorded(
    flag: str, value: str, field: str, memories: Callable[..., Path], cli: Cli
) -> None:
    path = memories("basic/MEMORY.md")
    before = path.read_bytes()
    first = open_store(str(path)).memories()[0]
    result = cli("edit", path, first.id, flag, value)
    assert result.code != 0
    assert f"a hermes store cannot keep an entry's {field}; nothing was written" in result.err
    assert path.read_bytes() == before
    assert open_store(str(path)).transactions() == []


# -- kill -9 while memtui commits --------------------------------------------------------------


def _commit_forever(path: Path, say: Callable[[str], None]) -> None:
    """The child (forked: no interpreter start per kill): commits step after step, saying each."""
    say("ready")
    while True:
        store = open_store(path)
        entries = store.memories()[:3]
        n = int(entries[0].content.split()[0].split("=")[1]) + 1
        changes = [Change(m, m.with_(content=f"n={n} {k}")) for k, m in enumerate(entries)]
        store.commit(changes, actor="user", kind="edit", reason=f"step {n}", now=datetime.now(UTC))
        say(str(n))


@pytest.mark.slow
def test_kill_9_during_commits_leaves_a_file_hermes_reads_before_or_after(
    tmp_path: Path,
) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_bytes(DELIMITER.join(["n=0 0", "n=0 1", "n=0 2", "Untouched."]).encode())
    path.chmod(0o600)
    rng = random.Random(23)
    reported, steps = 0, []
    for round_ in range(20):
        child = Forked(lambda say: _commit_forever(path, say))
        assert child.readline() == "ready\n"
        for _ in range(0 if round_ % 5 == 0 else rng.randint(1, 3)):
            line = child.readline()
            assert line, f"the child died before it was killed: {child.kill()}"
            reported = int(line)
        time.sleep(rng.uniform(0.0, 0.03))  # lands anywhere in the next commit, or between two
        err = child.kill()
        assert "Traceback" not in err, err
        assert hermes_guard_accepts(path)
        entries = hermes_read(path)
        step = {e.split()[0] for e in entries[:3]}
        assert len(step) == 1 and entries[3] == "Untouched.", entries  # never torn
        n = int(step.pop().split("=")[1])
        store = open_store(str(path))
        assert len([tx for tx in store.transactions() if tx.kind == "edit"]) == n
        assert n >= reported
        steps.append(n)
    assert steps == sorted(steps) and reported >= 16
    store = open_store(str(path))
    store.undo(now=NOW)  # the ids survived every kill: the last step undoes
    assert hermes_read(path)[:3] == [f"n={steps[-1] - 1} {k}" for k in range(3)]


def test_a_claude_code_memory_index_is_not_taken_for_hermes_notes(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    folder.mkdir()
    index = folder / "MEMORY.md"
    index.write_text(
        "- [Testing rules](feedback_testing.md) — run the real database in tests\n"
        "- [Project deadline](project_deadline.md) — freeze on 2026-12-10\n",
        encoding="utf-8",
    )
    before = index.read_bytes()
    assert open_store(index).format_name == "claude-code"
    assert index.read_bytes() == before
