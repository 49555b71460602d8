"""A plan file is the artefact a person reviewed: applied only as it was made (issue 15, item
11). Every tampered plan is refused, naming the action, with the store untouched."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult

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
