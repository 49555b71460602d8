"""Absorb rows in version-2 plan files: the absorptions of one rule share a bulk record with a
row per action (entries, fingerprints, keeper, recipe, result fingerprint; never the changes),
recomputed on read; each row its own action; an edited row refused naming its action; files
with an absorb record per action still read and apply."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from memtui import planfile
from memtui.demo import make_demo_memories
from memtui.engine.merging import absorb_entries
from memtui.engine.plan import Action, Plan
from memtui.model import Memory
from memtui.planfile import compact as plan_compact
from memtui.planfile.reading import parse
from memtui.service import Service
from memtui.stores import Change, Store
from memtui.stores.transfer import create_native_store
from tests.conftest import CliResult
from tests.test_scale_plans import refused_naming_the_action

Cli = Callable[..., CliResult]
NOW = "2026-12-01T00:00:00Z"


@pytest.fixture(autouse=True)
def clock_at_the_plans_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plans here are made as of NOW; they are applied with the clock there too (a plan made
    for a later time than the clock is refused)."""
    monkeypatch.setenv("MEMTUI_NOW", NOW)


MADE = datetime(2026, 11, 30, tzinfo=UTC)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A native store with duplicates of several users (the benches' demo data)."""
    memories = make_demo_memories(400, 11, MADE)
    names = ["ann", "bob", "cy"]
    memories = [m.with_(user_id=names[n % 3]) for n, m in enumerate(memories)]
    path = tmp_path / "store" / "store.json"
    path.parent.mkdir()
    create_native_store(path, memories, now=MADE, kind="import", reason="test")
    return path


def _plan(cli: Cli, store: Path, out: Path, *extra: str) -> dict[str, Any]:
    result = cli("plan", store, "--out", out, "--now", NOW, *extra)
    assert result.code == 0, result.err
    data: dict[str, Any] = json.loads(out.read_text())
    return data


def _absorb_records(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for a in plan["actions"] if a.get("bulk") and a["kind"] == "absorb"]


@pytest.mark.parametrize("profile", ["longterm", "default"])
def test_absorbs_are_rows_that_read_back_as_the_plan_made(
    profile: str, store: Path, cli: Cli, tmp_path: Path
) -> None:
    v1, v2 = tmp_path / "v1.json", tmp_path / "v2.json"
    full = _plan(cli, store, v1, "--plan-version", "1", "--profile", profile)
    compact = _plan(cli, store, v2, "--profile", profile)
    absorbs = [a for a in full["actions"] if a["kind"] == "absorb"]
    assert len(absorbs) > 5
    rows = [row for record in _absorb_records(compact) for row in record["rows"]]
    assert [row[0] for row in rows] == [a["id"] for a in absorbs]
    assert [row[1] for row in rows] == [a["targets"] for a in absorbs]
    assert not [a for a in compact["actions"] if a["kind"] == "absorb" and not a.get("bulk")]
    assert all("changes" not in record for record in _absorb_records(compact))
    again = planfile.load(str(v2), Store.open(store), Service().plans.seal_key())
    del full["seals"]
    assert again.to_dict() == full  # records, reasons, scores, dependencies and order


def test_version_1_and_2_files_with_absorb_rows_apply_alike(cli: Cli, tmp_path: Path) -> None:
    results = []
    for version in ("1", "2"):
        memories = make_demo_memories(300, 5, MADE)
        path = tmp_path / version / "store.json"
        path.parent.mkdir()
        create_native_store(path, memories, now=MADE, kind="import", reason="test")
        plan = tmp_path / f"plan{version}.json"
        _plan(cli, path, plan, "--plan-version", version, "--profile", "longterm")
        applied = cli("apply", path, plan, "--yes")
        assert applied.code == 0, applied.err
        results.append((applied.out.replace(str(path), "STORE"), Store.open(path).memories()))
    assert "absorb" in results[0][0]
    assert results[0] == results[1]


def test_an_absorb_row_is_rejectable_on_its_own(store: Path, cli: Cli, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    [skipped, kept, *_] = _absorb_records(_plan(cli, store, plan, "--profile", "longterm"))[0][
        "rows"
    ]
    dependants = [
        a.id for a in planfile.read_file(str(plan)).plan.actions if skipped[0] in a.depends_on
    ]
    result = cli("apply", store, plan, "--skip", ",".join([skipped[0], *dependants]), "--yes")
    assert result.code == 0, result.err
    after = Store.open(store)
    assert {after.get(i).status.value for i in skipped[1]} == {"active"}
    statuses = [after.get(i).status.value for i in kept[1]]
    assert statuses.count("active") == 1 and statuses[kept[3]] == "active"
    assert after.get(kept[1][kept[3]]).supersedes[-1] in kept[1]


def test_a_plan_is_refused_naming_an_absorbed_entry_that_changed_since(
    store: Path, cli: Cli, tmp_path: Path
) -> None:
    plan = tmp_path / "plan.json"
    row = _absorb_records(_plan(cli, store, plan, "--profile", "longterm"))[0]["rows"][0]
    changed = row[1][-1]
    opened = Store.open(store)
    was = opened.get(changed)
    opened.commit(
        [Change(was, was.with_(tags=(*was.tags, "edited")))],
        actor="user",
        kind="edit",
        reason="",
        now=MADE,
    )
    stored = store.read_bytes()
    result = cli("apply", store, plan, "--yes")
    assert result.code == 1
    assert "changed since the plan was made" in result.err and changed in result.err
    assert store.read_bytes() == stored


RowTamper = Callable[[dict[str, Any]], str]


def _rows(plan: dict[str, Any]) -> list[list[Any]]:
    rows: list[list[Any]] = _absorb_records(plan)[0]["rows"]
    return rows


def _keeper(plan: dict[str, Any]) -> str:
    row = _rows(plan)[0]
    row[3] = 1 - row[3] if len(row[1]) == 2 else (row[3] + 1) % len(row[1])
    return str(row[0])


def _boost(plan: dict[str, Any]) -> str:
    record = _absorb_records(plan)[0]
    record["recipe"]["boost"] = 0.2
    return str(record["rows"][0][0])


def _result(plan: dict[str, Any]) -> str:
    row = _rows(plan)[0]
    row[7] = "0" * 16
    return str(row[0])


def _dependency_dropped(plan: dict[str, Any]) -> str:
    row = next(r for r in _rows(plan) if r[4])
    row[4] = row[4][1:]
    return str(row[0])


def _entries_reordered(plan: dict[str, Any]) -> str:
    row = _rows(plan)[0]
    row[1].reverse()
    row[2].reverse()
    row[3] = len(row[1]) - 1 - row[3]  # the same keeper, the others retired in another order
    return str(row[0])


TAMPERING: dict[str, RowTamper] = {
    "keeper": _keeper,
    "boost": _boost,
    "result": _result,
    "dependency dropped": _dependency_dropped,
    "entries reordered": _entries_reordered,
}


@pytest.mark.parametrize("how", sorted(TAMPERING))
def test_a_tampered_absorb_row_is_refused_naming_the_action(
    how: str, store: Path, cli: Cli
) -> None:
    said = refused_naming_the_action(cli, store, TAMPERING[how], "--profile", "longterm")
    assert " (absorb) " in said and "Traceback" not in said


def test_a_file_with_an_absorb_per_action_still_reads_and_applies(
    monkeypatch: pytest.MonkeyPatch, cli: Cli, tmp_path: Path
) -> None:
    outcomes = []
    for name in ("old", "new"):
        memories = make_demo_memories(300, 7, MADE)
        path = tmp_path / name / "store.json"
        path.parent.mkdir()
        create_native_store(path, memories, now=MADE, kind="import", reason="test")
        plan = tmp_path / f"{name}.json"
        with monkeypatch.context() as m:
            if name == "old":  # the writer before absorb rows
                m.setattr(plan_compact, "absorb_row", lambda *args: None)
            data = _plan(cli, path, plan, "--profile", "longterm")
        assert bool(_absorb_records(data)) == (name == "new")
        read = planfile.load(str(plan), Store.open(path), Service().plans.seal_key())
        applied = cli("apply", path, plan, "--yes")
        assert applied.code == 0, applied.err
        made = {k: v for k, v in read.to_dict().items() if k != "store"}
        outcomes.append((made, applied.out.replace(str(path), "STORE")))
        outcomes.append((Store.open(path).memories(), None))
    assert outcomes[0] == outcomes[2] and outcomes[1] == outcomes[3]


def _entry(ident: str, **fields: Any) -> Memory:
    return Memory(id=ident, content=f"text of {ident}", created_at=MADE, **fields)


def _absorb(
    ident: str, members: list[Memory], keeper: int, now: datetime, **options: Any
) -> Action:
    others = [m for n, m in enumerate(members) if n != keeper]
    kept, retired = absorb_entries(members[keeper], others, now=now, **options)
    return Action(
        ident,
        "absorb",
        [m.id for m in members],
        list(members),
        [kept, *retired],
        "by hand",
        {"max_score": 0.97},
        "duplicates",
    )


def _round_trip(plan: Plan, memories: list[Memory]) -> tuple[dict[str, Any], Plan]:
    written = plan_compact.compact_plan(plan)
    read, pending = parse(orjson.loads(orjson.dumps(written)), "plan.json")
    plan_compact.expand(read, pending or {}, {m.id: m for m in memories})
    return written, read


def test_absorbs_with_a_boost_and_caps_read_back_exactly() -> None:
    now = datetime(2026, 12, 1, tzinfo=UTC)
    a = _entry("a", importance=0.5, tags=("x", "y"), paths=("p1",))
    b = _entry("b", importance=0.7, tags=("y", "z", "w"), paths=("p2", "p3"))
    c = _entry("c", importance=0.2, tags=("v",), access_count=3)
    d = _entry("d", importance=0.4)
    options = {"boost": 0.05, "max_paths": 2, "max_tags": 3}
    params = {"absorb_boost": 0.05, "max_paths": 2, "max_tags": 3}
    first = _absorb("a1", [a, b, c], 0, now, **options)
    then = _absorb("a2", [d, first.after[0]], 1, now)  # `a` as a1 leaves it
    then.depends_on = ["a1"]
    actions = [first, then]
    plan = Plan("s", "native", "f", "pi", now, params, actions)
    written, read = _round_trip(plan, [a, b, c, d])
    records = [r for r in written["actions"] if r.get("bulk")]
    assert [r["recipe"]["boost"] for r in records] == [0.05, 0.0]
    assert [row[4] for r in records for row in r["rows"]] == [[], ["a1"]]
    assert [row[2][1] for row in records[1]["rows"]] == [""]  # `a` as a1 leaves it
    assert read.to_dict() == plan.to_dict()


def test_an_absorb_the_recipe_cannot_recompute_keeps_a_record_of_its_own() -> None:
    now = datetime(2026, 12, 1, tzinfo=UTC)
    a, b = _entry("a", importance=0.5), _entry("b", importance=0.6)
    action = _absorb("a1", [a, b], 1, now)
    action.after[0] = action.after[0].with_(content="reworded by someone")
    plan = Plan("s", "native", "f", "longterm", now, {}, [action])
    written, read = _round_trip(plan, [a, b])
    [record] = written["actions"]
    assert "bulk" not in record and record["changes"]["b"]["content"][1] == "reworded by someone"
    assert read.to_dict() == plan.to_dict()
