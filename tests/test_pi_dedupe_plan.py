"""pi's dedupe in a plan follows the merges: pi folds duplicates only after a consolidation
that merged something, so a fold applies with at least one of the plan's merges, never alone,
and rejecting the merges rejects it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memtui import planfile
from memtui.engine.plan import Plan, closure
from memtui.engine.planner import DEDUPE_RULE, make_plan
from memtui.engine.profiles import PROFILES
from memtui.errors import MemtuiError
from memtui.service.plans import apply_plan
from memtui.stores import MemoryStore, open_store
from memtui.times import from_epoch_ms

SOURCE = Path(__file__).parent / "fixtures" / "pi_conformance" / "consolidate" / "dedupe-store.json"
NOW = from_epoch_ms(1795953600000)


def _planned(tmp_path: Path) -> tuple[MemoryStore, Plan, list[str], list[str]]:
    path = tmp_path / "memory-store.json"
    shutil.copy(SOURCE, path)
    store = open_store(str(path))
    plan = make_plan(
        store.memories(),
        PROFILES["pi"],
        NOW,
        store_format="pi",
        ids=store.traits.ids,
        store=str(path),
        fingerprint=store.fingerprint,
        session="s",
    )
    merges = [a.id for a in plan.actions if a.kind == "merge"]
    folds = [a.id for a in plan.actions if a.rule == DEDUPE_RULE]
    assert len(merges) >= 2 and folds
    return store, plan, merges, folds


def test_a_fold_alone_is_refused_in_one_line(tmp_path: Path) -> None:
    store, plan, merges, folds = _planned(tmp_path)
    free = [f for f in folds if not plan.action(f).depends_on]
    assert free  # folds of entries no merge touches
    before = Path(str(store.path)).read_bytes()
    with pytest.raises(MemtuiError) as refused:
        apply_plan(store, plan, free[:1], now=NOW)
    message = str(refused.value)
    assert "\n" not in message and free[0] in message and merges[0] in message
    assert "none of them is approved" in message
    assert Path(str(store.path)).read_bytes() == before


def test_a_fold_applies_after_any_one_merge(tmp_path: Path) -> None:
    store, plan, merges, folds = _planned(tmp_path)
    free = [f for f in folds if not plan.action(f).depends_on]
    tx = apply_plan(store, plan, [merges[-1], *free], now=NOW)  # not the first merge
    assert set(tx.details["actions"]) == {merges[-1], *free}


def test_rejecting_every_merge_rejects_every_fold(tmp_path: Path) -> None:
    _store, plan, merges, folds = _planned(tmp_path)
    approved = {a.id for a in plan.actions}
    for merge in merges:
        approved -= closure(plan, {merge}, upward=False, approved=approved)
        if merge != merges[-1]:
            # a merge is left: pi still folds the duplicates no rejected merge made
            assert any(not plan.action(f).depends_on for f in folds if f in approved)
    assert not approved.intersection(folds)
    # approving a fold does not bring back a merge the person rejected
    assert (
        closure(plan, folds[:1], upward=True).isdisjoint(merges) or plan.action(folds[0]).depends_on
    )


def test_a_merge_waiting_for_a_decision_leaves_the_folds_to_the_other_merges(
    tmp_path: Path,
) -> None:
    _store, plan, merges, folds = _planned(tmp_path)
    plan.action(merges[0]).needs_decision = True
    approved = plan.default_approved()
    assert merges[0] not in approved
    free = [f for f in folds if not plan.action(f).depends_on]
    assert set(free) <= set(approved)  # pi folds after the merges that remain
    for merge in merges:
        plan.action(merge).needs_decision = True
    assert not set(plan.default_approved()).intersection(folds)


@pytest.mark.parametrize("version", [1, 2])
def test_the_tie_survives_a_plan_file(version: int, tmp_path: Path) -> None:
    store, plan, _merges, folds = _planned(tmp_path)
    plan_file = tmp_path / "plan.json"
    planfile.write(plan, str(plan_file), version)
    read = planfile.load(str(plan_file), store, None)
    free = [f for f in folds if not plan.action(f).depends_on]
    with pytest.raises(MemtuiError, match="applies only after one of"):
        apply_plan(store, read, free[:1], now=NOW)
