"""A plan file is the artefact a person reviewed: applied only as it was made (issue 15, item
11). Every tampered plan is refused, naming the action, with the store untouched."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memtui import planfile
from memtui.demo import make_demo_memories
from memtui.engine.plan import Action, Plan
from memtui.engine.planner import make_plan
from memtui.engine.profiles import get_profile
from memtui.errors import MemtuiError
from memtui.model import Memory, Status
from memtui.stores import Store, create_native_store
from tests.conftest import NOW, CliResult

Cli = Callable[..., CliResult]
Tamper = Callable[[dict[str, Any]], str]


def _first(plan: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(a for a in plan["actions"] if a["kind"] == kind)


def _decay_importance(plan: dict[str, Any]) -> str:
    action = _first(plan, "decay")
    action["after"][0]["importance"] = 0.99 * action["after"][0]["importance"]
    return action["id"]


def _decay_content(plan: dict[str, Any]) -> str:
    action = _first(plan, "decay")
    action["after"][0]["content"] = "words nobody reviewed"
    return action["id"]


def _merged_importance(plan: dict[str, Any]) -> str:
    action = _first(plan, "merge")
    new = next(m for m in action["after"] if m["id"] not in {b["id"] for b in action["before"]})
    new["importance"] = 1.0
    return action["id"]


def _injected_entry(plan: dict[str, Any]) -> str:
    action = _first(plan, "decay")
    action["after"].append({**action["after"][0], "id": "mem_injected", "content": "injected"})
    action["targets"].append("mem_injected")
    return action["id"]


def _targets_changed(plan: dict[str, Any]) -> str:
    action = _first(plan, "absorb")
    action["targets"] = action["targets"][:1]
    return action["id"]


def _target_of_nothing(plan: dict[str, Any]) -> str:
    action = _first(plan, "decay")
    for record in (action["before"][0], action["after"][0]):
        record["id"] = "mem_nowhere"
    action["targets"] = ["mem_nowhere"]
    return action["id"]


def _decay_relabelled_merge(plan: dict[str, Any]) -> str:
    action = _first(plan, "decay")
    action["kind"] = "merge"
    return action["id"]


def _quarantined(plan: dict[str, Any]) -> str:
    action = _first(plan, "decay")
    action["after"][0]["status"] = "quarantined"
    return action["id"]


def _long_content(plan: dict[str, Any]) -> str:
    action = _first(plan, "merge")
    new = next(m for m in action["after"] if m["id"] not in {b["id"] for b in action["before"]})
    new["content"] = "x" * 5000
    return action["id"]


def _huge_access_count(plan: dict[str, Any]) -> str:
    action = _first(plan, "absorb")
    survivor = next(m for m in action["after"] if m.get("status", "active") == "active")
    survivor["access_count"] = 10**19
    return action["id"]


def _no_store(plan: dict[str, Any]) -> str:
    plan["store"] = ""
    return ""


TAMPERING: dict[str, Tamper] = {
    "decay importance": _decay_importance,
    "decay content": _decay_content,
    "merged importance": _merged_importance,
    "injected entry": _injected_entry,
    "targets changed": _targets_changed,
    "target of nothing": _target_of_nothing,
    "decay relabelled merge": _decay_relabelled_merge,
    "quarantined on pi": _quarantined,
    "5000 characters on pi": _long_content,
    "access count 10^19": _huge_access_count,
    "no store": _no_store,
}


@pytest.fixture
def planned(fixture_copy: Callable[[str], Path], cli: Cli, tmp_path: Path) -> tuple[Path, Path]:
    store = fixture_copy("realistic-store.json")
    plan = tmp_path / "plan.json"
    # version 1 (whole records): the tampering below edits them; test_scale_plans tampers v2
    assert cli("plan", store, "--out", plan, "--plan-version", "1").code == 0
    return store, plan


@pytest.mark.parametrize("how", sorted(TAMPERING))
def test_a_tampered_plan_is_refused_naming_the_action(
    how: str, planned: tuple[Path, Path], cli: Cli
) -> None:
    store, plan_path = planned
    plan = json.loads(plan_path.read_text())
    action_id = TAMPERING[how](plan)
    plan_path.write_text(json.dumps(plan))
    data = store.read_bytes()

    result = cli("apply", store, plan_path, "--yes")
    assert result.code == 1, result.out
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memtui: "), result.err
    if action_id:
        assert f"plan action {action_id} (" in lines[0], lines[0]
    else:
        assert "names no store" in lines[0]
    assert store.read_bytes() == data
    assert not (store.parent / (store.name + ".memtui")).exists()


def test_the_plan_as_made_applies(planned: tuple[Path, Path], cli: Cli) -> None:
    store, plan_path = planned
    result = cli("apply", store, plan_path, "--yes")
    assert result.code == 0, result.err


def _demo_store(tmp_path: Path) -> Path:
    memories = make_demo_memories(400, 11, NOW)
    memories = [m.with_(user_id=["ann", "bob", "cy"][n % 3]) for n, m in enumerate(memories)]
    path = tmp_path / "store.json"
    create_native_store(path, memories, now=NOW, kind="import", reason="test")
    return path


def _absorb_changed(
    tmp_path: Path, change: Callable[[Action, list[Memory], set[str]], Action]
) -> tuple[Store, Plan, str]:
    """A longterm plan of a 3-user store whose first absorb `change` edits in memory."""
    store = Store.open(_demo_store(tmp_path))
    plan = make_plan(
        store.memories(),
        get_profile("longterm"),
        NOW,
        store=str(store.path),
        store_format=store.format_name,
        ids=store.traits.ids,
        fingerprint=store.fingerprint,
    )
    touched = {t for a in plan.actions for t in a.targets}
    n, absorb = next((n, a) for n, a in enumerate(plan.actions) if a.kind == "absorb")
    plan.actions[n] = change(absorb, store.memories(), touched)
    return store, plan, absorb.id


def _load_edited(tmp_path: Path, store: Store, plan: Plan) -> Plan:
    """The plan as a file edited to hold it reads back against its store."""
    path = tmp_path / "edited-plan.json"
    planfile.write(plan, str(path), 1)
    return planfile.load(str(path), store, None)


def test_an_absorb_across_users_is_refused(tmp_path: Path) -> None:
    def with_a_stranger(action: Action, memories: list[Memory], touched: set[str]) -> Action:
        [keeper] = [m for m in action.after if m.status is Status.ACTIVE]
        stranger = next(m for m in memories if m.user_id != keeper.user_id and m.id not in touched)
        retired = stranger.with_(status=Status.MERGED, superseded_by=keeper.id)
        return dataclasses.replace(
            action,
            targets=[*action.targets, stranger.id],
            before=[*action.before, stranger],
            after=[*action.after, retired],
        )

    store, plan, ident = _absorb_changed(tmp_path, with_a_stranger)
    with pytest.raises(MemtuiError, match=f"plan action {ident} .*different users"):
        _load_edited(tmp_path, store, plan)


def test_an_absorb_that_lowers_the_keeper_below_its_entries_is_refused(tmp_path: Path) -> None:
    def lowered(action: Action, memories: list[Memory], touched: set[str]) -> Action:
        after = [m.with_(importance=0.0) if m.status is Status.ACTIVE else m for m in action.after]
        return dataclasses.replace(action, after=after)

    store, plan, ident = _absorb_changed(tmp_path, lowered)
    with pytest.raises(MemtuiError, match=f"plan action {ident} .*below its entries' importance"):
        _load_edited(tmp_path, store, plan)


def test_an_absorb_row_with_a_recipe_the_profile_never_uses_is_refused(
    tmp_path: Path, cli: Cli
) -> None:
    path = _demo_store(tmp_path)
    plan_path = tmp_path / "plan.json"
    assert cli("plan", path, "--out", plan_path, "--profile", "longterm").code == 0
    data = json.loads(plan_path.read_text())
    record = next(a for a in data["actions"] if a.get("bulk") and a["kind"] == "absorb")
    record["recipe"] = {**record["recipe"], "boost": -1.5}
    plan_path.write_text(json.dumps(data))
    before = path.read_bytes()
    result = cli("apply", path, plan_path, "--yes")
    assert result.code == 1 and result.err.count("\n") == 1
    assert f"plan action {record['rows'][0][0]} (absorb) uses a boost or caps" in result.err
    assert path.read_bytes() == before
