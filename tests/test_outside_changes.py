"""What the agent changed since you last looked: the line `memtui stats` prints, the list
`memtui outside` prints, `restore --outside/--since` as one undoable transaction, the agent's
events in `history`, memtui's own changes never counted as the agent's, and the record's
disk use bounded."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memtui.service import Service
from memtui.stores.ledger_outside import OutsideRecord
from tests.conftest import CliResult

Cli = Callable[..., CliResult]


def _pi_agent(path: Path, change: Callable[[list[dict[str, Any]]], None]) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc["memories"])
    tmp = path.with_name(path.name + ".agent")
    tmp.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


def _rewrite_remove_add(memories: list[dict[str, Any]]) -> None:
    memories[1]["content"] = "rewritten by the agent"
    del memories[0]
    memories.append({**memories[-1], "id": "mem_by_agent", "content": "added by the agent"})


def test_stats_says_what_the_agent_changed_since_you_last_looked(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    path = fixture_copy("example-store.json")
    first = cli("stats", path)
    assert "since you last looked" not in first.out  # memtui had never seen it
    _pi_agent(path, _rewrite_remove_add)
    shown = cli("stats", path)
    assert "since you last looked (2026-11-30 12:00): the agent added 1, changed 1, removed 1" in (
        shown.out
    )
    again = cli("stats", path)
    assert "since you last looked (2026-11-30 12:00): the agent changed nothing" in again.out
    as_json = json.loads(cli("stats", path, "--json").out)
    assert as_json["since_last_looked"] == {
        "looked_at": "2026-11-30T12:00:00Z",
        "added": 0,
        "changed": 0,
        "removed": 0,
    }


def test_outside_lists_each_change_with_before_and_after_and_history_marks_the_agent(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    path = fixture_copy("example-store.json")
    before = json.loads(path.read_text(encoding="utf-8"))["memories"]
    cli("stats", path)
    _pi_agent(path, _rewrite_remove_add)
    listed = cli("outside", path)
    assert listed.code == 0
    lines = listed.out.splitlines()
    assert lines[0].startswith(f"removed  {before[0]['id']}")
    assert lines[1] == f"  before: {before[0]['content']}"
    assert f"changed  {before[1]['id']}" in listed.out
    assert "  after:  rewritten by the agent" in listed.out
    assert "added    mem_by_agent" in listed.out
    history = cli("history", path)
    assert "   a1  2026-11-30T12:00:00Z  agent outside   3 entries   the agent added 1, " in (
        history.out
    )
    records = json.loads(cli("history", path, "--json").out)
    assert records[0]["actor"] == "agent"


@pytest.mark.parametrize("by", ["--outside", "--since"])
def test_restore_brings_back_what_the_agent_removed_or_rewrote_as_one_undoable_transaction(
    by: str, fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    path = fixture_copy("example-store.json")
    original = path.read_bytes()
    cli("stats", path)
    _pi_agent(path, _rewrite_remove_add)
    agents = path.read_bytes()
    ids = [m["id"] for m in json.loads(original)["memories"][:2]]
    args = (
        [a for i in ids for a in ("--outside", i)]
        if by == "--outside"
        else ["--since", "2026-11-30T00:00:00Z"]
    )
    done = cli("restore", path, *args)
    assert done.code == 0, done.err
    assert "(transaction 1)" in done.out and f"memtui undo {path} 1" in done.out
    back = json.loads(path.read_text(encoding="utf-8"))["memories"]
    want = json.loads(original)["memories"]
    # the records as they were, in their places; the agent's own new entry stays
    assert back[:-1] == want
    assert back[-1]["id"] == "mem_by_agent"
    assert cli("undo", path).code == 0
    assert json.loads(path.read_bytes()) == json.loads(agents)
    # memtui's own restore and undo are not the agent's changes (the person had not looked
    # since the agent's, so the line still says those)
    assert "the agent added 1, changed 1, removed 1" in cli("stats", path).out
    assert "the agent changed nothing" in cli("stats", path).out


def test_memtuis_own_changes_are_never_counted_as_the_agents(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    jsonl = fixture_copy("items.jsonl")
    native = jsonl.with_name("native.json")
    assert cli("import", jsonl, native).code == 0
    for path, ident in ((jsonl, "3"), (native, "3")):
        cli("stats", path)
        assert cli("edit", path, ident, "--content", "memtui's edit").code == 0
        assert cli("undo", path).code == 0
        assert cli("edit", path, ident, "--importance", "0.3").code == 0
        assert "the agent changed nothing" in cli("stats", path).out, path


def test_a_native_store_rewritten_by_another_program_is_restored(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    jsonl = fixture_copy("items.jsonl")
    native = jsonl.with_name("native.json")
    cli("import", jsonl, native)
    cli("stats", native)
    doc = json.loads(native.read_text(encoding="utf-8"))
    table = next(v for k, v in doc.items() if isinstance(v, dict) and len(v) > 3)
    key, record = next(iter(table.items()))
    table[key] = {**record, "content": "overwritten by a script"}
    native.write_text(json.dumps(doc), encoding="utf-8")
    assert "the agent added 0, changed 1, removed 0" in cli("stats", native).out
    assert cli("restore", native, "--outside", record["id"]).code == 0
    shown = cli("show", native, record["id"])
    assert record["content"] in shown.out


def test_bad_restore_requests_are_one_line_and_write_nothing(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    path = fixture_copy("example-store.json")
    cli("stats", path)
    _pi_agent(path, _rewrite_remove_add)
    data = path.read_bytes()
    for args, says in (
        (["--outside", "no-such-id"], "holds no outside change to 'no-such-id'"),
        (["--outside", "mem_by_agent"], "the agent added mem_by_agent"),
        (["--since", "yesterday"], "--since 'yesterday' is not an RFC 3339 time"),
        (["--since", "2030-01-01T00:00:00Z"], "the agent removed or rewrote nothing since"),
        (["some-id", "--since", "2026-01-01T00:00:00Z"], "not both"),
    ):
        result = cli("restore", path, *args)
        assert result.code != 0 and says in result.err, (args, result.err)
        assert len(result.err.strip().splitlines()) == 1
        assert path.read_bytes() == data
    assert cli("restore", path).code == 2


def test_the_record_is_bounded_and_older_events_stay_readable_in_archives(
    fixture_copy: Callable[[str], Path],
) -> None:
    path = fixture_copy("example-store.json")
    svc = Service()
    store = svc.stores.open(path)
    record = OutsideRecord(path.with_name(path.name + ".memtui"), str(path))
    record.catch_up(store, svc.now())
    for n in range(30):
        _pi_agent(path, lambda ms, n=n: ms[0].update(content=f"version {n} " + "x" * 2000))
        store.reload()
        assert record.catch_up(store, svc.now()) is not None
        record.compact(max_bytes=20_000, keep=3)
    assert record.events_path.stat().st_size <= 20_000 + 10_000
    archives = sorted(record.folder.glob("outside-archive-*.jsonl.gz"))
    assert len(archives) == 3
    events = record.events(archived=True)
    # the newest events are all there, in order, with the full before image of each change
    assert [e.id for e in events] == list(range(events[0].id, 31))
    assert events[-1].changes[0].before is not None
    assert events[-1].changes[0].before["content"].startswith("version 28 ")
    assert record.disk_bytes() < 30 * 2000


def test_watch_refuses_bad_arguments_in_one_line(tmp_path: Path, cli: Cli) -> None:
    missing = cli("watch", tmp_path / "nope.json")
    assert (
        missing.code == 1
        and missing.err.strip() == f"memtui: {tmp_path / 'nope.json'}: no such file"
    )
    for value in ("0", "nan", "inf", "1e300"):
        poll = cli("watch", tmp_path / "nope.json", "--poll", value)
        assert poll.code == 2, value
        assert poll.err.strip() == "memtui: --poll must be more than 0 and at most 3600 seconds"
    assert not list(tmp_path.iterdir())


def test_history_records_what_the_agent_changed_before_it_lists(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    path = fixture_copy("example-store.json")
    assert cli("history", path).code == 0  # memtui sees the store a first time
    _pi_agent(path, lambda ms: ms.pop(0))
    history = cli("history", path)
    assert "agent outside   1 entry     the agent added 0, changed 0, removed 1" in history.out


def test_restore_outside_brings_back_what_outside_showed_as_before(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    # the agent rewrites one entry twice, memtui recording each (two events): the restore
    # gives back the entry as `outside` shows it, from before the first rewrite
    path = fixture_copy("example-store.json")
    original = json.loads(path.read_text(encoding="utf-8"))["memories"][0]
    cli("stats", path)
    _pi_agent(path, lambda ms: ms[0].update(content="agent rewrote this"))
    assert f"  before: {original['content']}" in cli("outside", path).out
    _pi_agent(path, lambda ms: ms[0].update(content="second rewrite"))
    assert f"  before: {original['content']}" in cli("outside", path).out
    assert cli("restore", path, "--outside", original["id"]).code == 0
    [entry] = [m for m in json.loads(path.read_text())["memories"] if m["id"] == original["id"]]
    assert entry["content"] == original["content"]


def test_after_memtuis_own_change_only_what_the_agent_changed_next_is_counted(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    """The look after memtui's own transactions takes the entries as memtui left them as
    seen, and counts what the agent did next: a rewrite of an entry memtui edited, a removal
    of one it did not touch."""
    path = fixture_copy("example-store.json")
    cli("stats", path)
    ids = [m["id"] for m in json.loads(path.read_text(encoding="utf-8"))["memories"]]
    assert cli("edit", path, ids[1], "--content", "memtui's edit").code == 0
    assert cli("edit", path, ids[2], "--importance", "0.3").code == 0
    assert "the agent changed nothing" in cli("stats", path).out
    assert cli("edit", path, ids[1], "--content", "memtui's second edit").code == 0

    def rewrite_and_remove(memories: list[dict[str, Any]]) -> None:
        (edited,) = (m for m in memories if m["id"] == ids[1])
        assert edited["content"] == "memtui's second edit"
        edited["content"] = "the agent's rewrite"
        memories[:] = [m for m in memories if m["id"] != ids[3]]

    _pi_agent(path, rewrite_and_remove)
    listed = cli("outside", path).out
    assert "the agent's rewrite" in listed and ids[3] in listed
    assert ids[2] not in listed  # memtui's own edit, not the agent's
    assert "the agent added 0, changed 1, removed 1" in cli("stats", path).out


def test_what_the_agent_changed_is_told_in_a_store_holding_a_cut_emoji(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    """pi cuts text at 500 UTF-16 units and may leave half an emoji (a lone surrogate, which
    JSON writes as its escape): the state memtui saw is still read back next time."""
    path = fixture_copy("example-store.json")

    def agent(change: Callable[[list[dict[str, Any]]], None]) -> None:
        doc = json.loads(path.read_text(encoding="utf-8"))
        change(doc["memories"])
        tmp = path.with_name(path.name + ".agent")
        tmp.write_text(json.dumps(doc, indent=2), encoding="ascii")  # JSON.stringify's escape
        os.replace(tmp, path)

    agent(lambda memories: memories[0].update(content="half an emoji \ud83d"))
    cli("stats", path)
    agent(lambda memories: memories[1].update(content="rewritten by the agent"))
    assert "rewritten by the agent" in cli("outside", path).out
    assert "the agent added 0, changed 1, removed 0" in cli("stats", path).out
