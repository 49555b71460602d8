"""The wording a plan writes (merged or rewritten content) cannot be recomputed on apply, so
memtui seals it with a key in its data folder (issue 15, item 11): wording edited in the file
is refused naming the action; wording memtui did not seal waits for a person's decision."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memtui.demo import make_demo_memories
from memtui.planfile.absorb_rows import Recipe, absorbed, result_fingerprint
from memtui.planfile.compact import fingerprint
from memtui.service import Service
from memtui.stores import create_native_store
from tests.conftest import NOW, CliResult

Cli = Callable[..., CliResult]


def _plan(cli: Cli, store: Path, path: Path, version: str) -> dict[str, Any]:
    result = cli("plan", store, "--out", path, "--plan-version", version)
    assert result.code == 0, result.err
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _merge(plan: dict[str, Any]) -> dict[str, Any]:
    return next(a for a in plan["actions"] if a["kind"] == "merge" and not a.get("bulk"))


def _new_record(action: dict[str, Any]) -> dict[str, Any]:
    found = {b["id"] for b in action.get("before", []) if isinstance(b, dict)}
    return next(a for a in action["after"] if isinstance(a, dict) and a.get("id") not in found)


def _store_ids(store: Path) -> list[str]:
    return [m["id"] for m in json.loads(store.read_text())["memories"]]


def _store_contents(store: Path) -> list[str]:
    return [m["content"] for m in json.loads(store.read_text())["memories"]]


@pytest.mark.parametrize("version", ["1", "2"])
def test_edited_merged_wording_is_refused_naming_the_action(
    version: str, fixture_copy: Callable[[str], Path], cli: Cli, tmp_path: Path
) -> None:
    store = fixture_copy("realistic-store.json")
    path = tmp_path / "plan.json"
    plan = _plan(cli, store, path, version)
    action = _merge(plan)
    assert action["id"] in plan["seals"]["actions"]
    _new_record(action)["content"] = "I love the beach and my bank PIN is 1234."
    path.write_text(json.dumps(plan))
    data = store.read_bytes()

    result = cli("apply", store, path, "--yes")

    assert result.code == 1, result.out
    assert result.err.strip() == (
        f"memtui: plan action {action['id']} (merge): its wording was changed after memtui "
        "wrote the plan (its seal does not match) — make a new plan"
    )
    assert store.read_bytes() == data


def test_a_seal_removed_from_one_action_is_refused(
    fixture_copy: Callable[[str], Path], cli: Cli, tmp_path: Path
) -> None:
    store = fixture_copy("realistic-store.json")
    path = tmp_path / "plan.json"
    plan = _plan(cli, store, path, "2")
    action = _merge(plan)
    del plan["seals"]["actions"][action["id"]]
    path.write_text(json.dumps(plan))
    data = store.read_bytes()

    result = cli("apply", store, path, "--yes")

    assert result.code == 1
    assert f"plan action {action['id']} (merge) writes wording memtui did not seal" in result.err
    assert store.read_bytes() == data


@pytest.mark.parametrize("how", ["no seals", "another machine's key"])
def test_unsealed_wording_waits_for_a_decision(
    how: str, fixture_copy: Callable[[str], Path], cli: Cli, tmp_path: Path
) -> None:
    store = fixture_copy("realistic-store.json")
    path = tmp_path / "plan.json"
    plan = _plan(cli, store, path, "2")
    merges = [a for a in plan["actions"] if a["kind"] == "merge"]
    merged_id = _new_record(merges[0])["id"]
    if how == "no seals":
        del plan["seals"]
    else:
        plan["seals"]["key"] = "0123456789abcdef"
    path.write_text(json.dumps(plan))

    svc = Service()
    loaded = svc.plans.load_plan(str(path), svc.stores.open(store))
    waiting = [a for a in loaded.actions if a.kind == "merge"]
    assert waiting and all(a.needs_decision for a in waiting)
    assert waiting[0].reason.startswith("Wording not sealed by this memtui")
    result = cli("apply", store, path, "--yes")

    assert result.code == 0, result.err
    assert merged_id not in _store_ids(store)  # the merge was not applied by default
    assert "merge" not in result.out.split("in transaction")[0]
    assert f"merge {len(merges)}" in result.out.split("wait for a decision")[1]


def test_the_sealed_plan_applies_its_wording(
    fixture_copy: Callable[[str], Path], cli: Cli, tmp_path: Path
) -> None:
    store = fixture_copy("realistic-store.json")
    path = tmp_path / "plan.json"
    plan = _plan(cli, store, path, "2")
    merged = _new_record(_merge(plan))

    result = cli("apply", store, path, "--yes")

    assert result.code == 0, result.err
    assert merged["content"] in _store_contents(store)
    assert merged["id"] in _store_ids(store)


def test_the_key_is_made_once_and_private() -> None:
    first = Service().plans.seal_key()
    again = Service().plans.seal_key()
    assert first is not None and first == again and len(first) == 32
    key_file = Path(os.environ["MEMTUI_DATA"]) / "plan-seal.key"
    assert key_file.stat().st_mode & 0o777 == 0o600


def _absorb_store(tmp_path: Path) -> Path:
    memories = make_demo_memories(400, 11, NOW)
    path = tmp_path / "store.json"
    create_native_store(path, memories, now=NOW, kind="import", reason="test")
    return path


def test_an_absorb_row_with_its_keeper_swapped_is_refused(cli: Cli, tmp_path: Path) -> None:
    # which entry keeps its wording is the absorb's choice: the seal covers it, and the row's
    # own result fingerprint, which anyone can recompute, does not stop the swap
    store = _absorb_store(tmp_path)
    path = tmp_path / "plan.json"
    # no subject merge takes the absorbed entry in: the swap shows at the absorb itself
    Path(os.environ["MEMTUI_CONFIG"]).write_text("[profiles.default]\nsubject_threshold = 1.0\n")
    plan = _plan(cli, store, path, "2")
    svc = Service()
    # the entries as the actions before it leave them
    made = svc.plans.load_plan(str(path), svc.stores.open(store))
    # an absorb no later action builds on (a later one would be refused first, naming itself)
    later = {d for a in made.actions for d in a.depends_on}
    record, row = next(
        (a, r)
        for a in plan["actions"]
        if a.get("bulk") and a["kind"] == "absorb"
        for r in a["rows"]
        if r[0] not in later
    )
    assert row[0] in plan["seals"]["actions"]
    found = {m.id: m for m in made.action(row[0]).before}
    members = [found[i] for i in row[1]]
    row[3] = (row[3] + 1) % len(members)
    row[7] = result_fingerprint(
        row[1], absorbed(members, row[3], Recipe(**record["recipe"]), made.now), fingerprint
    )
    path.write_text(json.dumps(plan))
    data = store.read_bytes()

    result = cli("apply", store, path, "--yes")

    assert result.code == 1, result.out
    assert f"plan action {row[0]} (absorb): its wording was changed" in result.err
    assert store.read_bytes() == data


def test_an_absorb_without_a_seal_waits_for_a_decision(cli: Cli, tmp_path: Path) -> None:
    # a file from a memtui that did not seal absorbs yet: not refused, read before approving
    store = _absorb_store(tmp_path)
    path = tmp_path / "plan.json"
    plan = _plan(cli, store, path, "2")
    absorbs = {
        r[0] for a in plan["actions"] if a.get("bulk") and a["kind"] == "absorb" for r in a["rows"]
    }
    for ident in absorbs:
        del plan["seals"]["actions"][ident]
    path.write_text(json.dumps(plan))

    svc = Service()
    loaded = svc.plans.load_plan(str(path), svc.stores.open(store))
    waiting = [a for a in loaded.actions if a.id in absorbs]
    assert waiting and all(a.needs_decision for a in waiting)
    assert all(a.id not in loaded.default_approved() for a in waiting)
