"""The `memtui` command as a user runs it: output, JSON shapes, and what it leaves on disk."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from memtui.cli import build_parser
from memtui.sizes import size_text
from memtui.stores import open_store
from tests.conftest import FIXTURES, CliResult, assert_same_but_versions

Cli = Callable[..., CliResult]
README = Path(__file__).parent.parent / "README.md"


def _commands() -> dict[str, str]:
    action = build_parser()._subparsers._group_actions[0]  # type: ignore[union-attr]
    return {a.dest: a.help for a in action._choices_actions}


def test_help_lists_every_command_with_help_text(cli: Cli) -> None:
    with pytest.raises(SystemExit):
        cli("--help")
    commands = _commands()
    for name in [
        "demo",
        "stats",
        "list",
        "show",
        "edit",
        "history",
        "undo",
        "backups",
        "rollback",
        "import",
        "export",
    ]:
        assert commands.get(name), f"{name} has no help"


def test_readme_documents_every_command() -> None:
    text = README.read_text()
    for name in _commands():
        assert re.search(rf"memtui {name}\b", text), f"README does not mention `memtui {name}`"


def test_demo_writes_a_realistic_native_store(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "demo.json"
    result = cli("demo", "--out", out, "--no-tui")
    assert result.code == 0 and str(out) in result.out
    stats = json.loads(cli("stats", out, "--json").out)
    assert stats["format"] == "native" and 200 <= stats["total"] <= 1000
    assert len(stats["users"]) >= 3 and stats["tenured"] >= 1
    assert stats["by_source"].get("user", 0) >= 1
    assert stats["by_status"].get("superseded", 0) >= 2
    records = json.loads(cli("list", out, "--json", "--status", "all").out)
    contents = [r["content"] for r in records]
    assert any(re.search("[\u4e00-\u9fff]", c) for c in contents)
    assert not any(re.search(r"lorem|item \d+", c, re.I) for c in contents)
    # near-duplicates: the same fact in several wordings
    assert Counter(c.split()[0] for c in contents if c.isascii()).most_common(1)[0][1] >= 5
    chain = [r for r in records if r["status"] == "superseded"]
    assert all(r["superseded_by"] in {x["id"] for x in records} for r in chain)


def test_demo_is_deterministic_for_a_seed(tmp_path: Path, cli: Cli) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    cli("demo", "--out", a, "--no-tui", "--seed", "3", "--size", "50")
    cli("demo", "--out", b, "--no-tui", "--seed", "3", "--size", "50")
    assert cli("list", a, "--json").out == cli("list", b, "--json").out
    assert len(json.loads(cli("list", a, "--json", "--status", "all").out)) == 50


def test_demo_refuses_to_overwrite_a_store_that_is_not_a_demo(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "mine.json"
    out.write_bytes((FIXTURES / "example-store.json").read_bytes())
    for extra in (["--fresh"], []):  # regenerating it, or opening it as the demo
        result = cli("demo", "--out", out, "--no-tui", *extra)
        assert result.code == 1 and "not a memtui demo store" in result.err
        assert out.read_bytes() == (FIXTURES / "example-store.json").read_bytes()


def test_stats_json_shape(cli: Cli, fixture_copy: Callable[[str], Path]) -> None:
    stats = json.loads(cli("stats", fixture_copy("items.jsonl"), "--json").out)
    assert stats["format"] == "longterm" and stats["total"] == 12
    assert stats["by_status"] == {"active": 9, "superseded": 1, "quarantined": 1, "deleted": 1}
    assert stats["users"] == {"u1": 7, "u2": 5}
    assert set(stats) >= {"by_category", "by_source", "transactions", "backups"}


def test_stats_says_how_much_of_a_native_file_its_journal_takes(
    cli: Cli,
    tmp_path: Path,
    fixture_copy: Callable[[str], Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = tmp_path / "store.json"
    assert cli("import", fixture_copy("realistic-store.json"), store).code == 0

    def ledger_line() -> tuple[str, dict[str, object]]:
        [line] = [s for s in cli("stats", store).out.splitlines() if "ledger" in s]
        return line, json.loads(cli("stats", store, "--json").out)

    line, stats = ledger_line()
    assert stats["file_bytes"] == store.stat().st_size
    assert 0 < stats["journal_bytes"] < store.stat().st_size / 2  # type: ignore[operator]
    assert (
        line.endswith(f"of the file's {size_text(store.stat().st_size)}") and "compact" not in line
    )
    # a plan's changes a month apart, each kept as images: past half the file, how to move
    # old ones out is said
    plan = tmp_path / "plan.json"
    for month in ("01", "02", "03"):
        monkeypatch.setenv("MEMTUI_NOW", f"2027-{month}-01T00:00:00Z")
        assert cli("plan", store, "--profile", "longterm", "--out", plan).code == 0
        assert cli("apply", store, plan, "--yes").code == 0
    line, stats = ledger_line()
    journal = stats["journal_bytes"]
    assert isinstance(journal, int) and journal > store.stat().st_size / 2
    assert f"the journal is {size_text(journal)} of the file" in line
    assert line.endswith(f"(memtui compact {store} --keep N moves older ones out)")
    assert "journal" not in cli("stats", FIXTURES / "items.jsonl").out  # its ledger is beside it
    # a compressed backup: its size on disk is not what it holds, and compact refuses it
    packed = tmp_path / "packed.json"
    packed.write_bytes(gzip.compress(store.read_bytes()))
    assert "journal" not in cli("stats", packed).out
    assert json.loads(cli("stats", packed, "--json").out)["file_bytes"] is None


def test_list_filters_sorts_and_limits(cli: Cli) -> None:
    path = FIXTURES / "items.jsonl"
    records = json.loads(
        cli("list", path, "--json", "--user", "u1", "--sort", "importance", "--desc").out
    )
    assert [r["id"] for r in records] == ["6", "1", "5", "2", "3", "7"]  # superseded 4 hidden
    keys = {"id", "content", "category", "importance", "source", "status", "user_id", "created_at"}
    assert keys <= set(records[0])
    assert records[0]["created_at"] == "2026-01-03T12:00:00Z"
    found = json.loads(cli("list", path, "--json", "--query", "GREEN TEA").out)
    assert [r["id"] for r in found] == ["8", "9"]
    every = json.loads(cli("list", path, "--json", "--status", "all", "--limit", "20").out)
    assert len(every) == 12
    text = cli("list", path, "--status", "superseded,deleted")
    assert text.code == 0 and "用户在一家初创公司工作" in text.out and "2 of 12" in text.err


def test_show_prints_fields_and_history(fixture_copy: Callable[[str], Path], cli: Cli) -> None:
    path = fixture_copy("example-store.json")
    ident = "mem_mx1tnnak_a73461d3"
    cli("edit", path, ident, "--tags", "auth,jwt", "--reason", "tidy tags")
    shown = json.loads(cli("show", path, ident, "--json").out)
    assert shown["tags"] == ["auth", "jwt"] and shown["tenured"] is True
    assert [h["reason"] for h in shown["history"]] == ["tidy tags"]
    text = cli("show", path, ident).out
    assert "使用 JWT 认证" in text and "tidy tags" in text


def test_edit_on_pi_changes_only_that_entry(fixture_copy: Callable[[str], Path], cli: Cli) -> None:
    path = fixture_copy("realistic-store.json")
    before = json.loads(path.read_bytes())
    target = before["memories"][7]
    result = cli(
        "edit", path, target["id"], "--content", "I ride my bike to school.", "--importance", "0.6"
    )
    assert result.code == 0 and "transaction 1" in result.out
    after = json.loads(path.read_bytes())
    assert path.stat().st_mode & 0o777 == 0o600
    assert after["memories"][7] == {
        **target,
        "content": "I ride my bike to school.",
        "potency": 0.6,
    }
    assert after["memories"][:7] == before["memories"][:7]
    assert after["memories"][8:] == before["memories"][8:]
    assert {k: v for k, v in after.items() if k not in ("memories", "updatedAt")} == {
        k: v for k, v in before.items() if k not in ("memories", "updatedAt")
    }
    assert list(after["memories"][7]) == list(target)  # key order kept


def test_edit_refuses_while_the_agent_holds_the_lock(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    path = fixture_copy("example-store.json")
    path.with_name(path.name + ".lock").write_text("")
    data = path.read_bytes()
    result = cli("edit", path, "mem_mx1tnnak_a73461d3", "--importance", "0.1")
    assert result.code == 1 and "locked by another process" in result.err
    assert path.read_bytes() == data


@pytest.mark.parametrize("name", ["realistic-store.json", "items.jsonl", "records.jsonl"])
def test_reading_commands_never_rewrite_the_store(
    name: str, fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    path = fixture_copy(name)
    data, stamp = path.read_bytes(), path.stat().st_mtime_ns
    ident = open_store(path).memories()[0].id
    for args in (
        ["stats"],
        ["list"],
        ["list", "--json"],
        ["show", ident],
        ["history"],
        ["backups", "--json"],
    ):
        assert cli(args[0], path, *args[1:]).code == 0
    assert path.read_bytes() == data and path.stat().st_mtime_ns == stamp
    # `stats` says what the agent changed since you last looked: it keeps what it saw
    sidecar = path.with_name(path.name + ".memtui")
    assert sorted(p.name for p in sidecar.iterdir()) == ["seen-head.json", "seen.json.gz"]


def test_history_undo_backups_rollback(fixture_copy: Callable[[str], Path], cli: Cli) -> None:
    path = fixture_copy("items.jsonl")
    original = path.read_bytes()
    cli("edit", path, "3", "--content", "用户每天早上喝两杯美式")
    cli("edit", path, "9", "--status", "archived", "--reason", "stale")
    history = json.loads(cli("history", path, "--json").out)
    assert [h["id"] for h in history] == [2, 1]
    assert [h["id"] for h in json.loads(cli("history", path, "--json", "--limit", "1").out)] == [2]
    for bad in ("0", "-3"):
        refused = cli("history", path, "--limit", bad)
        assert refused.code == 2 and "--limit must be 1 or more" in refused.err
    assert history[0] == {
        "id": 2,
        "at": "2026-11-30T12:00:00Z",
        "actor": "user",
        "kind": "edit",
        "reason": "stale",
        "memory_ids": ["9"],
        "undoes": None,
        "undone_by": None,
        "backup": history[0]["backup"],
        "details": {},
    }
    undo = cli("undo", path)
    assert undo.code == 0 and "undid transaction 2 as transaction 3" in undo.out
    assert open_store(path).get("9").status.value == "active"
    assert json.loads(cli("history", path, "--json").out)[1]["undone_by"] == 3
    backups = json.loads(cli("backups", path, "--json").out)
    assert len(backups) == 3 and set(backups[0]) == {"name", "at", "tx", "bytes"}
    oldest = backups[-1]["name"]
    rolled = cli("rollback", path, oldest)
    assert rolled.code == 0 and "rolled back" in rolled.out
    assert_same_but_versions(path.read_bytes(), original)


def test_import_and_export(tmp_path: Path, cli: Cli) -> None:
    native = tmp_path / "imported.json"
    result = cli("import", FIXTURES / "realistic-store.json", native)
    assert result.code == 0 and "imported 300 entries" in result.out
    assert json.loads(cli("stats", native, "--json").out)["format"] == "native"
    assert json.loads(cli("history", native, "--json").out)[0]["kind"] == "import"
    again = cli("import", FIXTURES / "realistic-store.json", native)
    assert again.code == 1 and "already exists" in again.err
    out = tmp_path / "back.json"
    assert cli("export", native, out, "--format", "pi").code == 0
    assert (
        json.loads(out.read_bytes())["memories"]
        == json.loads((FIXTURES / "realistic-store.json").read_bytes())["memories"]
    )
    from_longterm = tmp_path / "from-longterm.json"
    said = cli("export", FIXTURES / "items.jsonl", from_longterm, "--format", "pi")
    assert said.code == 0
    assert "written as pi's type fact (pi has no such category): " in said.out
    categories = {
        m["category"] for m in json.loads(cli("list", FIXTURES / "items.jsonl", "--json").out)
    }
    assert any(c in said.out for c in categories - {"fact", "preference"})


def test_text_output_shows_hostile_content_literally(tmp_path: Path, cli: Cli) -> None:
    hostile = "[bold red]x[/] \x1b[31mred\x1b]52;c;aGk=\x07 \u202eevil\u200b\nline2"
    store = tmp_path / "h.json"
    store.write_text(json.dumps({"version": 1, "memories": [{"id": "h1", "content": hostile}]}))
    for args in (["list"], ["show", "h1"]):
        out = cli(args[0], store, *args[1:]).out
        assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
        assert "[bold red]x[/]" in out and "\\x1b[31m" in out and "\\u202e" in out
    raw = cli("list", store, "--json").out
    assert "\x1b" not in raw and "\u202e" not in raw
    assert json.loads(raw)[0]["content"] == hostile


def test_add_writes_one_undoable_entry_and_refuses_what_the_format_cannot_hold(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    path = fixture_copy("realistic-store.json")
    before = path.read_bytes()
    added = cli("add", path, "I prefer window seats.", "--category", "preference", "--json")
    assert added.code == 0, added.err
    ident = json.loads(added.out)["memory_ids"][0]
    shown = json.loads(cli("show", path, ident, "--json").out)
    assert shown["content"] == "I prefer window seats." and shown["category"] == "preference"
    refused = cli("add", path, "x", "--category", "bogus")
    assert refused.code == 1 and "not 'bogus'" in refused.err
    assert cli("add", path, "x", "--importance", "2").code == 2
    assert cli("undo", path).code == 0
    assert path.read_bytes() == before


def test_stats_text_shows_creation_times_to_the_second(
    cli: Cli, fixture_copy: Callable[[str], Path]
) -> None:
    out = cli("stats", fixture_copy("realistic-store.json")).out
    [line] = [line for line in out.splitlines() if line.strip().startswith("created")]
    assert re.fullmatch(r"\s+created\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ … \S+Z", line), line
    assert "." not in line  # the JSON keeps the full precision; people read seconds
