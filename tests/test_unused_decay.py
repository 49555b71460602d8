"""A store where no use was ever recorded (`default` profile): decay from each entry's creation
with the half-life 30 + 335 × importance days, ×2 for identity and preference facts (chosen:
bench/README.md), so such a store is not archived wholesale within a year. The faithful
profiles keep their own decay."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memtui.engine.planner import make_plan
from memtui.engine.profiles import get_profile
from memtui.model import Memory, Status
from memtui.service import Service
from memtui.stores import Store, create_native_store
from tests.conftest import CliResult

NOW = datetime(2026, 12, 1, tzinfo=UTC)
YEAR_AGO = NOW - timedelta(days=365)


@pytest.fixture(autouse=True)
def _clock_at_the_plans_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plans here are made for NOW; applying them needs the clock there too (a plan made
    for a later time than the clock is refused)."""
    monkeypatch.setenv("MEMTUI_NOW", NOW.isoformat().replace("+00:00", "Z"))


def _never_used() -> list[Memory]:
    facts = [
        ("Caroline is a single parent", "identity"),
        ("Caroline mentors a transgender teen", "identity"),
        ("Caroline loves hiking in the mountains", "preference"),
        ("Caroline went to an adoption meeting", "event"),
    ]
    return [
        Memory(id=f"m{n}", content=text, category=kind, importance=0.6, created_at=YEAR_AGO)
        for n, (text, kind) in enumerate(facts)
    ]


def _after(plan_actions: list[object], memories: list[Memory]) -> dict[str, Memory]:
    out = {m.id: m for m in memories}
    for action in plan_actions:
        for m in action.after:  # type: ignore[attr-defined]
            out[m.id] = m
    return out


def test_identity_facts_of_a_never_used_store_outlast_a_year() -> None:
    memories = _never_used()
    plan = make_plan(memories, get_profile("default"), NOW)
    assert plan.params["decay_model"] == "halflife"
    assert plan.params["decay_slower"] == {"identity": 2.0, "preference": 2.0}
    after = _after(plan.actions, memories)
    line = get_profile("default").expire_below  # below it, archived
    for ident in ("m0", "m1", "m2"):  # half-life (30 + 335 × 0.6) × 2 = 462 days
        assert after[ident].importance == pytest.approx(0.6 * 0.5 ** (365 / 462))
        assert after[ident].importance > line and after[ident].status is Status.ACTIVE
    # an event fades on the plain half-life (231 days) and is proposed for archiving
    assert after["m3"].importance == pytest.approx(0.6 * 0.5 ** (365 / 231))
    [archive] = [a for a in plan.actions if a.kind == "archive"]
    assert archive.targets == ["m3"]
    decay = next(a for a in plan.actions if a.kind == "decay" and a.targets == ["m0"])
    assert "No use was ever recorded" in decay.reason and "half-life 462 days" in decay.reason


def test_a_store_with_recorded_use_decays_as_before() -> None:
    used = [m.with_(last_accessed_at=YEAR_AGO, access_count=1) for m in _never_used()]
    plan = make_plan(used, get_profile("default"), NOW)
    assert plan.params["decay_model"] == "longterm" and "decay_slower" not in plan.params
    after = _after(plan.actions, used)
    assert after["m0"].importance == pytest.approx(0.6 * 0.995**365)
    assert {a.targets[0] for a in plan.actions if a.kind == "archive"} == {"m0", "m1", "m2", "m3"}


def test_the_go_systems_own_rule_stays_exact_on_a_never_used_store() -> None:
    plan = make_plan(_never_used(), get_profile("longterm"), NOW)
    after = _after(plan.actions, _never_used())
    assert after["m0"].importance == pytest.approx(0.6 * 0.995**365)
    assert "decay_slower" not in plan.params


@pytest.mark.parametrize("version", [1, 2])
def test_a_saved_plan_of_a_never_used_store_applies_its_half_life(
    version: int, tmp_path: Path
) -> None:
    path = tmp_path / "store.json"
    create_native_store(path, _never_used(), now=YEAR_AGO, kind="import", reason="test")
    svc = Service()
    plan = svc.plans.plan(svc.stores.open(path), get_profile("default"), now=NOW)
    plan_file = tmp_path / "plan.json"
    svc.plans.write_plan(plan, str(plan_file), version)
    store = svc.stores.open(path)
    read = svc.plans.load_plan(str(plan_file), store)
    decays = [a.id for a in read.actions if a.kind == "decay"]
    svc.plans.apply(store, read, decays)
    kept = {m.id: m for m in Store.open(path).memories()}
    assert kept["m0"].importance == pytest.approx(0.6 * 0.5 ** (365 / 462))
    assert kept["m3"].importance == pytest.approx(0.6 * 0.5 ** (365 / 231))


def test_the_decay_view_of_a_never_used_store_shows_the_half_life(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    path = tmp_path / "store.json"
    create_native_store(path, _never_used(), now=YEAR_AGO, kind="import", reason="test")
    shown = cli("decay", path, "m0", "--json")
    assert shown.code == 0, shown.err
    assert json.loads(shown.out)["model"] == "halflife"
