"""Compact plan files (version 2): only what changes, a fingerprint per entry found, decay as
one bulk record per rule; still applied only as made and refused when the store moved on."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memtui import planfile
from memtui.service import Service
from memtui.stores import Change, Store
from tests.conftest import FIXTURES, CliResult

Cli = Callable[..., CliResult]


def _plan(cli: Cli, store: Path, out: Path, *extra: str) -> dict[str, Any]:
    result = cli("plan", store, "--out", out, *extra)
    assert result.code == 0, result.err
    data: dict[str, Any] = json.loads(out.read_text())
    return data


@pytest.mark.parametrize("fixture", ["realistic-store.json", "items.jsonl", "records.jsonl"])
def test_a_compact_plan_reads_back_as_the_plan_made(
    fixture: str, fixture_copy: Callable[[str], Path], cli: Cli, tmp_path: Path
) -> None:
    store_path = fixture_copy(fixture)
    v1, v2 = tmp_path / "v1.json", tmp_path / "v2.json"
    full = _plan(cli, store_path, v1, "--plan-version", "1")
    compact = _plan(cli, store_path, v2)
    assert compact["version"] == 2 and full["version"] == 1
    assert v2.stat().st_size < v1.stat().st_size / 2
    decays = [a for a in full["actions"] if a["kind"] == "decay"]
    bulk = [a for a in compact["actions"] if a.get("bulk") and a["kind"] == "decay"]
    # one record per user and rule: the plan has each user's actions together
    users = {(a["before"][0].get("user_id"), a["rule"]) for a in decays}
    assert len(bulk) == len(users) and len({a["rule"] for a in decays}) == 1
    assert [row[0] for r in bulk for row in r["rows"]] == [a["id"] for a in decays]
    store = Store.open(store_path)
    again = planfile.load(str(v2), store, Service().plans.seal_key())
    del full["seals"]  # checked, then dropped, as a plan is read
    assert again.to_dict() == full  # every record, reason and score, as the v1 file has them


def test_version_1_and_2_files_apply_alike(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMTUI_NOW", "2026-12-01T00:00:00Z")  # applied at the plan's time
    results = []
    for version in ("1", "2"):
        (tmp_path / version).mkdir()
        store = tmp_path / version / "realistic-store.json"
        store.write_bytes((FIXTURES / "realistic-store.json").read_bytes())
        plan = tmp_path / f"plan{version}.json"
        _plan(cli, store, plan, "--plan-version", version, "--now", "2026-12-01T00:00:00Z")
        applied = cli("apply", store, plan, "--yes")
        assert applied.code == 0, applied.err
        results.append((applied.out.replace(str(store), "STORE"), Store.open(store).memories()))
    assert results[0] == results[1]


def test_a_decay_in_a_bulk_record_is_rejectable_on_its_own(
    fixture_copy: Callable[[str], Path], cli: Cli, tmp_path: Path
) -> None:
    store = fixture_copy("items.jsonl")
    plan = tmp_path / "plan.json"
    data = _plan(cli, store, plan)
    bulk = max(
        (a for a in data["actions"] if a.get("bulk") and a["kind"] == "decay"),
        key=lambda a: len(a["rows"]),
    )
    skipped, kept = bulk["rows"][0], bulk["rows"][1]
    dependants = [
        a.id for a in planfile.read_file(str(plan)).plan.actions if skipped[0] in a.depends_on
    ]
    before = Store.open(store)
    was_skipped, was_kept = before.get(skipped[1]), before.get(kept[1])
    result = cli("apply", store, plan, "--skip", ",".join([skipped[0], *dependants]), "--yes")
    assert result.code == 0, result.err
    after = Store.open(store)
    assert after.get(skipped[1]) == was_skipped
    assert after.get(kept[1]).importance == pytest.approx(kept[5])
    assert after.get(kept[1]).importance < was_kept.importance


def test_a_plan_is_refused_naming_the_entries_that_changed_since(
    fixture_copy: Callable[[str], Path], cli: Cli, tmp_path: Path
) -> None:
    store_path = fixture_copy("realistic-store.json")
    plan = tmp_path / "plan.json"
    data = _plan(cli, store_path, plan)
    merge = next(a for a in data["actions"] if a["kind"] == "merge")
    [bulk] = [a for a in data["actions"] if a.get("bulk")]
    touched = [merge["found"][0][0], bulk["rows"][-1][1]]
    store = Store.open(store_path)
    store.commit(
        [Change(store.get(i), store.get(i).with_(content=f"edited {i}")) for i in touched],
        actor="user",
        kind="edit",
        reason="",
        now=datetime(2026, 12, 1, tzinfo=UTC),
    )
    stored = store_path.read_bytes()
    result = cli("apply", store_path, plan, "--yes")
    assert result.code == 1
    assert "changed since the plan was made; 2 of the entries" in result.err
    assert all(i in result.err for i in touched), result.err
    assert store_path.read_bytes() == stored


Tamper = Callable[[dict[str, Any]], str]


def _row(plan: dict[str, Any]) -> list[Any]:
    rows: list[list[Any]] = next(a for a in plan["actions"] if a.get("bulk"))["rows"]
    return rows[0]


def _row_importance(plan: dict[str, Any]) -> str:
    row = _row(plan)
    row[5] = 0.99 * row[5]
    return str(row[0])


def _row_importance_before(plan: dict[str, Any]) -> str:
    row = _row(plan)
    row[4] = row[4] / 2
    return str(row[0])


def _first(plan: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(a for a in plan["actions"] if a["kind"] == kind and not a.get("bulk"))


def _absorbed_content(plan: dict[str, Any]) -> str:
    action = _first(plan, "absorb")
    ident = next(iter(action["changes"]))
    action["changes"][ident]["content"] = ["whatever", "words nobody reviewed"]
    return str(action["id"])


def _merged_importance(plan: dict[str, Any]) -> str:
    action = _first(plan, "merge")
    next(a for a in action["after"] if isinstance(a, dict))["importance"] = 1.0
    return str(action["id"])


def _injected(plan: dict[str, Any]) -> str:
    action = _first(plan, "absorb")
    action["after"].append({"id": "mem_injected", "content": "injected"})
    action["targets"].append("mem_injected")
    return str(action["id"])


TAMPERING: dict[str, Tamper] = {
    "decay row importance": _row_importance,
    "decay row importance before": _row_importance_before,
    "absorb changes content": _absorbed_content,
    "merged importance": _merged_importance,
    "injected entry": _injected,
}


@pytest.mark.parametrize("how", sorted(TAMPERING))
def test_a_tampered_compact_plan_is_refused_naming_the_action(
    how: str, fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    refused_naming_the_action(cli, fixture_copy("realistic-store.json"), TAMPERING[how])


def refused_naming_the_action(cli: Cli, store: Path, tamper: Tamper, *extra: str) -> str:
    """What `apply` says of a plan file edited by `tamper` (which returns the action it
    edits): refused, naming that action, the store untouched."""
    plan_path = store.parent / "tampered-plan.json"
    plan = _plan(cli, store, plan_path, *extra)
    action_id = tamper(plan)
    plan_path.write_text(json.dumps(plan))
    data = store.read_bytes()
    result = cli("apply", store, plan_path, "--yes")
    assert result.code == 1, result.out
    assert f"plan action {action_id} (" in result.err, result.err
    assert store.read_bytes() == data
    return result.err


def test_an_unknown_plan_version_is_refused_clearly(
    fixture_copy: Callable[[str], Path], cli: Cli, tmp_path: Path
) -> None:
    store = fixture_copy("items.jsonl")
    plan = tmp_path / "plan.json"
    data = _plan(cli, store, plan)
    plan.write_text(json.dumps({**data, "version": 3}))
    result = cli("apply", store, plan, "--yes")
    assert result.code == 1
    assert "version 3; this memtui reads versions 1 and 2" in result.err
