"""The wholesale guard: a plan that would take more than a fifth of one user's active entries
out of use asks before each of them, in every profile, says so first, and still applies the
ones a person approves; a plan under the line is as it was."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memtui.engine.planner import make_plan
from memtui.engine.profiles import PROFILE_NAMES, get_profile
from memtui.model import Memory, Status
from memtui.service import Service
from memtui.stores import Store, create_native_store
from tests.conftest import CliResult

Cli = Callable[..., CliResult]
NOW = datetime(2026, 12, 1, tzinfo=UTC)
WORDS = [
    "amber",
    "basalt",
    "cedar",
    "dune",
    "ember",
    "fjord",
    "glacier",
    "harbor",
    "iris",
    "juniper",
    "kelp",
    "lagoon",
    "meadow",
    "nectar",
    "orchid",
    "prairie",
    "quarry",
    "reef",
    "sierra",
    "tundra",
    "umber",
    "valley",
    "willow",
    "yarrow",
]
REMOVALS = {"archive", "expire", "deprecate"}


@pytest.fixture(autouse=True)
def _clock_at_the_plans_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plans here are made for NOW; applying them needs the clock there too (a plan made
    for a later time than the clock is refused)."""
    monkeypatch.setenv("MEMTUI_NOW", NOW.isoformat().replace("+00:00", "Z"))


def _entry(n: int, *, old: bool, user: str | None = None) -> Memory:
    """An entry past every profile's decay and expiry line (`old`), or a fresh important one;
    no two share a word, so nothing merges."""
    made = NOW - timedelta(days=400 if old else 1)
    return Memory(
        id=f"{user or 'm'}-{n}",
        content=f"{WORDS[n]} {WORDS[n][::-1]} {user or ''}".strip(),
        category="general",
        importance=0.25 if old else 0.9,
        created_at=made,
        last_decayed_at=made,
        user_id=user,
    )


def _store(tmp_path: Path, memories: list[Memory]) -> Path:
    path = tmp_path / "store.json"
    create_native_store(path, memories, now=NOW - timedelta(days=500), kind="import", reason="t")
    return path


def _gone(plan_data: dict[str, Any], action: dict[str, Any]) -> bool:
    """Whether the action (in a version-1 plan) takes its entry out of use."""
    if action["kind"] in REMOVALS:
        return True
    line = plan_data["params"].get("archive_line")
    if action["kind"] != "decay" or line is None:
        return False
    return bool(action["after"][0]["importance"] < line <= action["before"][0]["importance"])


@pytest.mark.parametrize("profile", PROFILE_NAMES)
def test_a_store_entirely_past_the_line_is_not_archived_without_asking(
    profile: str, tmp_path: Path, cli: Cli
) -> None:
    store = _store(tmp_path, [_entry(n, old=True) for n in range(10)])
    args = ("plan", store, "--profile", profile, "--now", NOW.isoformat())
    text = cli(*args)
    assert text.code == 0, text.err
    first = text.out.splitlines()[0]
    verb = {"pi": "decay 10 below 0.2", "longterm": "delete 10", "thesearch": "deprecate 10"}
    assert first == (
        f"would {verb.get(profile, 'archive 10')} of 10 entries (100 %) of the store: review "
        "before approving"
    )
    data = json.loads(cli(*args, "--json", "--plan-version", "1").out)
    assert data["warnings"] == [first]
    gone = [a for a in data["actions"] if _gone(data, a)]
    assert len({a["targets"][0] for a in gone}) == 10
    assert all(a["needs_decision"] for a in gone)
    assert all(a["reason"].startswith("Held for review: the plan would ") for a in gone)

    plan_file = tmp_path / "plan.json"
    assert cli(*args, "--out", plan_file).code == 0
    left = cli("apply", store, plan_file, "--yes")  # what needs no decision: none of them
    assert all(m.status is Status.ACTIVE for m in Store.open(store).memories())
    if left.code == 1:  # pi: its decays are all there is
        assert left.err.strip() == "memtui: no action is approved; nothing to apply"
    else:
        assert "wait for a decision" in left.out
        plan_file.unlink()
        assert cli(*args, "--out", plan_file).code == 0  # the store changed (decays applied)
    by_hand = next(a for a in gone if a["kind"] in REMOVALS or profile == "pi")
    chosen = ",".join(
        a["id"]
        for a in json.loads(cli(*args, "--json", "--plan-version", "1").out)["actions"]
        if a["targets"] == by_hand["targets"]
    )
    applied = cli("apply", store, plan_file, "--only", chosen, "--yes")
    assert applied.code == 0, applied.err
    after = {m.id: m for m in Store.open(store).memories()}
    [ident] = by_hand["targets"]
    if profile == "pi":
        assert after[ident].importance < 0.2  # decayed below pi's line, as approved
    else:
        assert after[ident].status is not Status.ACTIVE
    assert sum(m.status is Status.ACTIVE for m in after.values()) >= 9


@pytest.mark.parametrize("profile", PROFILE_NAMES)
def test_a_fifth_or_less_is_approved_as_before(profile: str) -> None:
    memories = [_entry(n, old=n < 2) for n in range(10)]
    plan = make_plan(memories, get_profile(profile), NOW, store="s")
    held = [a for a in plan.actions if a.details.get("wholesale")]
    assert plan.warnings == [] and not held
    removed = [a for a in plan.actions if a.kind in REMOVALS]
    assert all(not a.needs_decision for a in removed)
    if profile != "pi":
        assert sorted(a.targets[0] for a in removed) == ["m-0", "m-1"]
    approved = set(plan.default_approved())
    assert all(a.id in approved for a in removed)


def test_only_the_user_who_crosses_the_line_is_held() -> None:
    emptied = [_entry(n, old=True, user="ana") for n in range(5)]
    kept = [_entry(n, old=n == 5, user="ben") for n in range(5, 15)]
    plan = make_plan([*emptied, *kept], get_profile("default"), NOW, store="s")
    assert plan.warnings == [
        "would archive 5 of 5 entries (100 %) of user ana: review before approving"
    ]
    archives = {a.targets[0]: a for a in plan.actions if a.kind == "archive"}
    assert sorted(archives) == ["ana-0", "ana-1", "ana-2", "ana-3", "ana-4", "ben-5"]
    approved = set(plan.default_approved())
    assert [i for i, a in archives.items() if a.id in approved] == ["ben-5"]
    assert "user ana" in archives["ana-0"].reason and "ben" not in archives["ana-0"].reason
    # approving by hand still works
    plan.decide({*approved, archives["ana-3"].id})
    assert archives["ana-3"].id in plan.default_approved()


@pytest.mark.parametrize("version", [1, 2])
def test_a_saved_plan_still_asks_and_an_edited_one_does_not_slip_through(
    version: int, tmp_path: Path
) -> None:
    store = _store(tmp_path, [_entry(n, old=True) for n in range(6)])
    svc = Service()
    plan = svc.plans.plan(svc.stores.open(store), get_profile("default"), now=NOW)
    path = tmp_path / "plan.json"
    svc.plans.write_plan(plan, str(path), version)
    read = svc.plans.load_plan(str(path), svc.stores.open(store))
    assert read.warnings == plan.warnings != []
    archived = [a for a in read.actions if a.kind == "archive"]
    assert len(archived) == 6 and all(a.needs_decision for a in archived)

    data = json.loads(path.read_text())
    if version == 2:  # held or not, the archivings stay one bulk record: held again on reading
        [bulk] = [a for a in data["actions"] if a.get("bulk") and a["kind"] == "archive"]
        assert len(bulk["rows"]) == 6
    data.pop("warnings")
    for action in data["actions"]:  # pretend they never needed a decision
        action.pop("needs_decision", None)
        action["needs_decision"] = False
        if isinstance(action.get("details"), dict):
            action["details"].pop("wholesale", None)
    path.write_text(json.dumps(data))
    edited = svc.plans.load_plan(str(path), svc.stores.open(store))
    assert edited.warnings == plan.warnings
    approved = set(edited.default_approved())
    assert not approved & {a.id for a in edited.actions if a.kind == "archive"}
    assert all(m.status is Status.ACTIVE for m in Store.open(store).memories())
