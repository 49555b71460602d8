"""The consolidation commands as a user runs them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from memtui.stores import open_store
from tests.conftest import FIXTURES, CliResult, assert_same_but_versions

Cli = Callable[..., CliResult]


def test_sim_prints_the_score(cli: Cli) -> None:
    result = cli(
        "sim", "Use pnpm as the package manager", "This project uses pnpm as its package manager"
    )
    assert result.code == 0 and result.out.strip() == "0.857143"
    data = json.loads(cli("sim", "a b", "a c", "--method", "tf-cosine", "--json").out)
    assert data["scores"] == {"tf-cosine": pytest.approx(0.5)}


def test_pairs_json_shape(cli: Cli) -> None:
    pairs = json.loads(
        cli("pairs", FIXTURES / "realistic-store.json", "--threshold", "0.9", "--json").out
    )
    assert pairs and set(pairs[0]) == {"a", "b", "score"}
    assert all(p["score"] >= 0.9 for p in pairs)
    assert [p["score"] for p in pairs] == sorted((p["score"] for p in pairs), reverse=True)


def test_pairs_never_cross_users(cli: Cli) -> None:
    pairs = json.loads(
        cli("pairs", FIXTURES / "items.jsonl", "--method", "pi", "--threshold", "0.5", "--json").out
    )
    users = {m.id: m.user_id for m in open_store(FIXTURES / "items.jsonl").memories()}
    assert pairs and all(users[p["a"]] == users[p["b"]] for p in pairs)
    # "用户喜欢咖啡" is written by both users, never paired across them
    assert {"1", "10"} not in [{p["a"], p["b"]} for p in pairs]


def test_plan_apply_undo(fixture_copy: Callable[[str], Path], tmp_path: Path, cli: Cli) -> None:
    path = fixture_copy("items.jsonl")
    original = path.read_bytes()
    plan_file = tmp_path / "plan.json"
    text = cli("plan", path, "--out", plan_file)
    assert text.code == 0 and "longterm plan" in text.out and "absorb 2" in text.out
    assert path.read_bytes() == original  # planning changes nothing
    plan = json.loads(plan_file.read_text())
    assert plan["format"] == "memtui-plan" and plan["summary"]["absorb"] == 2
    applied = cli("apply", path, plan_file, "--yes")
    # the peanut allergy, once of importance 1.00, waits for a decision (guard_once_important),
    # and so do the other expiries: a third of each user's entries would go (the wholesale guard)
    assert "would delete 2 of 6 entries (33 %) of user u1: review before approving" in text.out
    assert applied.code == 0 and "10 entries → 7" in applied.out
    assert cli("undo", path).code == 0
    assert_same_but_versions(path.read_bytes(), original)


def test_apply_only_and_skip(fixture_copy: Callable[[str], Path], tmp_path: Path, cli: Cli) -> None:
    path = fixture_copy("items.jsonl")
    plan_file = tmp_path / "plan.json"
    plan = json.loads(cli("plan", path, "--json", "--out", plan_file).out)
    expire = next(a for a in plan["actions"] if a["kind"] == "expire")
    only = cli("apply", path, plan_file, "--only", expire["id"], "--yes")
    assert only.code == 1 and "depends on" in only.err
    chosen = ",".join([*expire["depends_on"], expire["id"]])
    assert cli("apply", path, plan_file, "--only", chosen, "--yes").code == 0
    history = json.loads(cli("history", path, "--json").out)
    assert set(history[0]["memory_ids"]) == set(expire["targets"])


def test_bad_plan_files(fixture_copy: Callable[[str], Path], tmp_path: Path, cli: Cli) -> None:
    path = fixture_copy("items.jsonl")
    data = path.read_bytes()
    bad = tmp_path / "bad.json"
    cases = {
        b"{not json": "not valid JSON",
        b'{"format": "something-else"}': "not a usable plan file",
        b'{"format": "memtui-plan", "version": 9}': "version 9",
    }
    for content, message in cases.items():
        bad.write_bytes(content)
        result = cli("apply", path, bad, "--yes")
        assert result.code == 1 and message in result.err and result.err.count("\n") == 1
    assert cli("apply", path, tmp_path / "missing.json", "--yes").code == 1
    other = fixture_copy("records.jsonl")
    plan_file = tmp_path / "other.json"
    cli("plan", other, "--out", plan_file)
    foreign = cli("apply", path, plan_file, "--yes")
    assert foreign.code == 1 and "was made for" in foreign.err
    assert path.read_bytes() == data


def test_merge_supersede_restore_chain(fixture_copy: Callable[[str], Path], cli: Cli) -> None:
    path = fixture_copy("items.jsonl")
    merged = cli("merge", path, "1", "3", "--content", "用户每天早上喝咖啡")
    assert merged.code == 0 and "merged 2 entries into 13" in merged.out
    assert open_store(path).get("13").content == "用户每天早上喝咖啡"
    assert cli("supersede", path, "7", "6", "--reason", "weather is not a fact").code == 0
    chain = json.loads(cli("chain", path, "7", "--json").out)
    assert chain["superseded_by"] == ["6"]
    lineage = json.loads(cli("chain", path, "13", "--json").out)
    assert lineage["supersedes"] == ["1", "3"] and lineage["events"][-1]["kind"] == "merge"
    restored = cli("restore", path, "3")
    assert restored.code == 0 and "removed the merged entry 13" in restored.out
    store = open_store(path)
    assert store.get("1").status.value == "active" and store.get("13").status.value == "deleted"
    refused = cli("merge", path, "1", "8")
    assert refused.code == 1 and "different users" in refused.err


def test_decay_command(cli: Cli) -> None:
    one = json.loads(
        cli(
            "decay",
            FIXTURES / "example-store.json",
            "mem_mx1tnnaj_c9effc14",
            "--days",
            "30",
            "--json",
        ).out
    )
    assert one["model"] == "pi" and one["line"] == 0.2
    assert one["curve"][0]["day"] == 0 and one["curve"][-1]["day"] == 30
    everything = json.loads(cli("decay", FIXTURES / "items.jsonl", "--json", "--days", "90").out)
    assert everything["model"] == "longterm" and len(everything["entries"]) == 9


def test_decay_rows_name_their_columns_and_show_each_entrys_content(cli: Cli) -> None:
    out = cli("decay", FIXTURES / "items.jsonl", "--days", "30")
    lines = out.out.splitlines()
    assert lines[1].split() == ["crosses", "now", "30d", "id", "content"]
    rows = {line.split()[-2]: line for line in lines[2:]}
    assert rows["6"].split()[0] == "already"  # below the line now: not "0.0 d"
    assert rows["6"].endswith("用户对花生过敏")
    assert all(not row.split()[-1].isdigit() for row in rows.values())  # content, not an id


def test_plan_rows_show_the_memory_each_action_touches(cli: Cli) -> None:
    out = cli("plan", FIXTURES / "items.jsonl", "--now", "2026-11-29T00:00:00Z").out
    rows = [line.lstrip("? ").split(maxsplit=2) for line in out.splitlines()[1:]]
    expired = [row[2] for row in rows if row[1] == "expire"]
    # the entry first, then why: not 14 rows of reasons alone
    assert any(row.startswith("用户对花生过敏  · 330 days old") for row in expired)


def test_every_profile_asks_before_a_once_important_fact_expires(
    cli: Cli, fixture_copy: Callable[[str], Path], tmp_path: Path
) -> None:
    # the Go store's own rule (longterm) decays a peanut allergy from 1.00 and expires it
    path = fixture_copy("items.jsonl")
    plan_file = tmp_path / "plan.json"
    shown = cli("plan", path, "--out", plan_file)
    assert shown.code == 0, shown.err
    [allergy] = [
        line for line in shown.out.splitlines() if "花生过敏" in line and " expire " in line
    ]
    assert allergy.startswith("?") and "expire" in allergy and "only if you decide" in allergy
    applied = cli("apply", path, plan_file, "--yes")
    assert applied.code == 0, applied.err
    # with the two expiries the wholesale guard holds (a third of each user's entries)
    assert "left out 3 actions that wait for a decision (expire 3)" in applied.out
    [kept] = [m for m in open_store(path).memories() if m.content == "用户对花生过敏"]
    assert kept.visible


def test_apply_of_a_missing_plan_file_says_so_before_asking_for_yes(
    fixture_copy: Callable[[str], Path], tmp_path: Path, cli: Cli
) -> None:
    store = fixture_copy("example-store.json")
    before = store.read_bytes()
    missing = cli("apply", store, tmp_path / "nope.plan")
    assert missing.code == 1
    assert missing.err.strip() == f"memtui: {tmp_path / 'nope.plan'}: no such plan file"
    assert store.read_bytes() == before
