"""The consolidation engine against its source systems' documented behaviour."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from memtui.engine.decay import model
from memtui.engine.plan import plan_changes
from memtui.engine.planner import make_plan
from memtui.engine.profiles import get_profile
from memtui.engine.similarity import pi_similarity
from memtui.errors import MemtuiError
from memtui.model import Memory, Source, Status
from memtui.planfile.reading import parse
from memtui.service import Service
from memtui.service.plans import apply_plan
from memtui.stores import create_native_store, open_store
from tests.conftest import FIXTURES, NOW, unversioned


def _plan(path: Path, profile: str, now=NOW):  # type: ignore[no-untyped-def]
    store = open_store(path)
    return store, make_plan(
        store.memories(),
        get_profile(profile),
        now,
        store=str(store.path),
        store_format=store.format_name,
        ids=store.traits.ids,
        fingerprint=store.fingerprint,
    )


# -- decay ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("days", "expected"), [(30, 0.860), (100, 0.606), (240, 0.300), (365, 0.161)]
)
def test_longterm_decay_figures(days: int, expected: float) -> None:
    """The figures the Go system's documents quote (to three places)."""
    memory = Memory(id="1", content="x", importance=1.0, created_at=NOW)
    assert model("longterm").value_at(memory, NOW, days) == pytest.approx(expected, abs=1e-3)


def test_pi_potency_08_crosses_03_after_19_days() -> None:
    memory = Memory(id="1", content="x", importance=0.8, last_decayed_at=NOW)
    assert model("pi").crossing_day(memory, NOW, 0.3) == pytest.approx(19.12, abs=0.01)
    tenured = memory.with_(tenured=True)
    assert model("pi").value_at(tenured, NOW, 100) == 0.8
    assert model("pi").crossing_day(tenured, NOW, 0.3) is None


def test_longterm_decay_anchors_on_use_so_reruns_do_not_compound() -> None:
    old = Memory(
        id="1",
        content="x",
        importance=1.0,
        created_at=NOW - timedelta(days=100),
        last_accessed_at=NOW - timedelta(days=10),
    )
    decay = model("longterm")
    once = decay.value_at(old, NOW)
    assert once == pytest.approx(0.995**10)  # from the last use, not from creation
    applied = old.with_(importance=once, last_decayed_at=NOW)
    assert decay.value_at(applied, NOW) == pytest.approx(once)  # nothing more the same day


def test_ebbinghaus_recall_makes_memories_last_longer() -> None:
    base = Memory(id="1", content="x", importance=1.0, last_accessed_at=NOW)
    decay = model("ebbinghaus")
    rarely, often = base, base.with_(access_count=9)
    assert decay.value_at(often, NOW, 20) > decay.value_at(rarely, NOW, 20)
    assert decay.value_at(rarely, NOW, 5) == pytest.approx(math.exp(-1))
    assert decay.crossing_day(often, NOW, 0.5) == pytest.approx(50 * math.log(2))


def test_halflife_depends_on_significance() -> None:
    decay = model("halflife")
    trivial = Memory(id="1", content="x", importance=0.0, last_accessed_at=NOW)
    assert decay.value_at(trivial.with_(importance=1e-9), NOW, 30) == pytest.approx(0.5e-9)
    vital = Memory(id="2", content="x", importance=1.0, last_accessed_at=NOW)
    assert decay.value_at(vital, NOW, 365) == pytest.approx(0.5)


# -- profile pi -------------------------------------------------------------------------------


def _pi_reference_clusters(memories: list[Memory]) -> set[frozenset[str]]:
    """pi's consolidator, written from its description: decay, then active entries (tenured
    or potency ≥ 0.3) not written by the user; union-find over pairs with similarity ≥ 0.3;
    clusters of 2–8."""

    def potency(m: Memory) -> float:
        if m.tenured:
            return m.importance
        assert m.last_decayed_at is not None
        return m.importance * 0.95 ** ((NOW - m.last_decayed_at).total_seconds() / 86400)

    candidates = [m for m in memories if (m.tenured or potency(m) >= 0.3) and m.source != "user"]
    parent = {m.id: m.id for m in candidates}

    def find(x: str) -> str:
        while parent[x] != x:
            x = parent[x]
        return x

    for i, a in enumerate(candidates):
        for b in candidates[i + 1 :]:
            if pi_similarity(a.content, b.content) >= 0.3:
                parent[find(a.id)] = find(b.id)
    groups: dict[str, set[str]] = {}
    for m in candidates:
        groups.setdefault(find(m.id), set()).add(m.id)
    return {frozenset(g) for g in groups.values() if 2 <= len(g) <= 8}


def test_pi_profile_merges_exactly_pis_clusters() -> None:
    store, plan = _plan(FIXTURES / "realistic-store.json", "pi")
    merges = [a for a in plan.actions if a.kind == "merge"]
    existing = {m.id for m in store.memories()}
    found = {frozenset(t for t in a.targets if t in existing) for a in merges}
    reference = _pi_reference_clusters(store.memories())
    assert reference and found == reference


def test_pi_merged_entry_follows_pis_field_rules() -> None:
    _store, plan = _plan(FIXTURES / "realistic-store.json", "pi")
    for action in (a for a in plan.actions if a.kind == "merge"):
        members = action.before
        merged = next(m for m in action.after if m.id not in {b.id for b in members})
        assert (
            set(merged.paths) <= {p for m in members for p in m.paths} and len(merged.paths) <= 20
        )
        assert set(merged.tags) <= {t for m in members for t in m.tags} and len(merged.tags) <= 5
        assert len(merged.tags) == min(5, len({t for m in members for t in m.tags}))
        assert merged.importance == max(m.importance for m in members)
        assert merged.access_count == sum(m.access_count for m in members)
        assert merged.tenured == any(m.tenured for m in members)
        assert merged.source is Source.AUTO and merged.category == members[0].category
        assert merged.supersedes == tuple(m.id for m in members)
        retired = [m for m in action.after if m.id != merged.id]
        assert {m.status for m in retired} == {Status.MERGED}
        assert {m.superseded_by for m in retired} == {merged.id}


def test_pi_profile_leaves_user_entries_alone() -> None:
    store, plan = _plan(FIXTURES / "example-store.json", "pi")
    user_written = {m.id for m in store.memories() if m.source is Source.USER}
    touched = {t for a in plan.actions if a.kind in ("merge", "absorb") for t in a.targets}
    assert user_written and not (user_written & touched)
    # the two PPT font entries that pi's own consolidator merged
    [merge] = [a for a in plan.actions if a.kind in ("merge", "absorb")]
    assert sorted(m.content[:4] for m in merge.before) == ["PPT字", "PPT字"]
    assert {m.id for m in merge.before} == {"mem_mx1tnnaj_c9effc14", "mem_mx1tnnak_699306ba"}


# -- profile longterm -------------------------------------------------------------------------


def _lt(ident: str, content: str, importance: float, days_old: float, **kw: object) -> Memory:
    created = NOW - timedelta(days=days_old)
    return Memory(
        id=ident,
        content=content,
        importance=importance,
        created_at=created,
        last_accessed_at=created,
        last_decayed_at=NOW,
        user_id="u1",
        **kw,
    )  # type: ignore[arg-type]


def test_longterm_on_the_go_fixture() -> None:
    store, plan = _plan(FIXTURES / "items.jsonl", "longterm")
    by_kind: dict[str, list] = {}
    for a in plan.actions:
        by_kind.setdefault(a.kind, []).append(a)
    users = {m.id: m.user_id for m in store.memories()}
    for action in plan.actions:
        assert len({users.get(t, action.after[0].user_id) for t in action.targets}) == 1
    absorbed = {frozenset(a.targets): a for a in by_kind["absorb"]}
    coffee = absorbed[frozenset({"1", "2", "3"})]
    survivor = next(m for m in coffee.after if m.status is Status.ACTIVE)
    assert survivor.importance == max(m.importance for m in coffee.before)
    tea = absorbed[frozenset({"8", "9"})]
    kept = next(m for m in tea.after if m.status is Status.ACTIVE)
    assert kept.id == "8" and kept.tags == ("drink",) and kept.category == "preference"
    # superseded, deleted and quarantined records take no part
    assert not {"4", "11", "12"} & {t for a in plan.actions for t in a.targets}


def test_longterm_rule_merge_joins_or_keeps_the_longer() -> None:
    memories = [
        _lt("1", "user likes green tea in the morning", 0.6, 5),
        _lt("2", "user likes green tea in the morning and jasmine tea", 0.5, 4),
        _lt("3", "the user owns a red bike and a blue car", 0.7, 5),
        _lt("4", "the user owns a red bike and a green car", 0.4, 3),
    ]
    plan = make_plan(memories, get_profile("longterm"), NOW, store_format="longterm")
    merges = {
        frozenset(t for t in a.targets if t in "1234"): a for a in plan.actions if a.kind == "merge"
    }
    contained = merges[frozenset({"1", "2"})].after[0]
    assert contained.content == "user likes green tea in the morning and jasmine tea"
    joined = merges[frozenset({"3", "4"})].after[0]
    assert (
        joined.content
        == "the user owns a red bike and a blue car；the user owns a red bike and a green car"
    )
    assert joined.importance == 0.7 and joined.supersedes == ("3", "4")


def test_longterm_expiry_needs_both_age_and_low_importance() -> None:
    memories = [
        _lt("old-low", "parking is on level two", 0.2, 40),
        _lt("old-high", "the wifi password is under the router", 0.9, 40),
        _lt("young-low", "standup moved to ten", 0.2, 10),
    ]
    plan = make_plan(memories, get_profile("longterm"), NOW, store_format="longterm")
    assert [a.targets for a in plan.actions if a.kind == "expire"] == [["old-low"]]
    default = make_plan(memories, get_profile("default"), NOW, store_format="native")
    [archive] = [a for a in default.actions if a.kind == "archive"]
    assert archive.after[0].status is Status.ARCHIVED


def test_absorb_loses_no_metadata() -> None:
    memories = [
        _lt("1", "用户对花生过敏", 0.9, 20, category="general", tags=("a",), access_count=3),
        _lt(
            "2",
            "用户对花生过敏",
            0.5,
            50,
            category="fact",
            tags=("b",),
            access_count=4,
            evidence_count=2,
            extra={"slot_hint": "safety"},
        ),
    ]
    plan = make_plan(memories, get_profile("longterm"), NOW, store_format="longterm")
    [absorb] = [a for a in plan.actions if a.kind == "absorb"]
    kept = next(m for m in absorb.after if m.id == "1")
    assert kept.content == "用户对花生过敏" and kept.importance == 0.9
    assert kept.category == "fact" and kept.tags == ("a", "b")
    assert kept.access_count == 7 and kept.evidence_count == 3
    assert kept.extra["slot_hint"] == "safety" and kept.created_at == memories[1].created_at
    retired = next(m for m in absorb.after if m.id == "2")
    assert retired.status is Status.MERGED and retired.superseded_by == "1"


def test_conflicts_need_a_decision_and_are_not_approved_by_default() -> None:
    memories = [
        _lt("1", "user lives in berlin and works at a startup", 0.7, 90, category="identity"),
        _lt("2", "user lives in berlin and works at google now", 0.8, 2, category="identity"),
    ]
    plan = make_plan(memories, get_profile("longterm"), NOW, store_format="longterm")
    [conflict] = [a for a in plan.actions if a.kind == "conflict"]
    assert conflict.needs_decision and conflict.id not in plan.default_approved()
    older = next(m for m in conflict.after if m.id == "1")
    assert older.status is Status.SUPERSEDED and older.superseded_by == "2"


# -- thesearch --------------------------------------------------------------------------------


def test_thesearch_promotes_and_deprecates() -> None:
    memories = [
        _lt("p1", "prefers vim keybindings", 0.6, 0.1, status=Status.PROPOSED, evidence_count=3),
        _lt("p2", "likes kotlin", 0.6, 0.1, status=Status.PROPOSED, evidence_count=1),
        _lt("old", "once asked about llamas", 0.05, 90),
    ]
    plan = make_plan(memories, get_profile("thesearch"), NOW, store_format="native")
    assert [a.targets for a in plan.actions if a.kind == "promote"] == [["p1"]]
    [deprecate] = [a for a in plan.actions if a.kind == "deprecate"]
    assert deprecate.targets == ["old"] and deprecate.after[0].status is Status.DEPRECATED
    assert plan.health["proposed"] == 2 and "average_weight" in plan.health


def test_thesearch_does_not_promote_a_proposed_near_duplicate_of_an_active_fact() -> None:
    active = _lt("a1", "the user lives in Paris with two cats", 0.8, 2)
    duplicate = _lt("p1", "the user lives in Paris with two cats", 0.6, 1.25)  # 30 hours old
    fresh = _lt("p2", "the user is learning the cello", 0.6, 1.25)
    memories = [
        active,
        duplicate.with_(status=Status.PROPOSED, evidence_count=1),
        fresh.with_(status=Status.PROPOSED, evidence_count=1),
    ]
    plan = make_plan(memories, get_profile("thesearch"), NOW, store_format="native")
    assert [a.targets for a in plan.actions if a.kind == "promote"] == [["p2"]]


# -- plans: dependencies, apply, undo, restore ------------------------------------------------


def test_an_action_needs_the_actions_it_depends_on() -> None:
    _, plan = _plan(FIXTURES / "items.jsonl", "longterm")
    absorb = next(a for a in plan.actions if a.kind == "absorb")
    assert absorb.depends_on
    with pytest.raises(MemtuiError, match="depends on"):
        plan_changes(plan, [absorb.id])
    assert plan_changes(plan, [*absorb.depends_on, absorb.id])


@pytest.mark.parametrize("name", ["realistic-store.json", "items.jsonl"])
def test_apply_then_undo_restores_the_store(name: str, fixture_copy: Callable[[str], Path]) -> None:
    path = fixture_copy(name)
    before = {m.id: m for m in open_store(path).memories()}
    store, plan = _plan(path, "pi" if name.endswith(".json") else "longterm")
    tx = apply_plan(store, plan, None, now=NOW)
    assert {m.id: m for m in open_store(path).memories()} != before
    open_store(path).undo(tx.id, now=NOW)
    assert unversioned({m.id: m for m in open_store(path).memories()}) == unversioned(before)


def test_apply_a_subset_changes_exactly_those_entries(fixture_copy: Callable[[str], Path]) -> None:
    path = fixture_copy("realistic-store.json")
    store, plan = _plan(path, "pi")
    merge = next(a for a in plan.actions if a.kind == "merge")
    chosen = [*merge.depends_on, merge.id]
    apply_plan(store, plan, chosen, now=NOW)
    after = {m.id: m for m in open_store(path).memories()}
    original = {m.id: m for m in open_store(FIXTURES / "realistic-store.json").memories()}
    changed = {i for i in original if after.get(i) != original[i]} | (
        after.keys() - original.keys()
    )
    assert changed == set(merge.targets)


def test_restore_of_one_merged_member_undoes_the_whole_merge(tmp_path: Path) -> None:
    source = open_store(FIXTURES / "realistic-store.json")
    path = tmp_path / "native.json"
    create_native_store(path, source.memories(), now=NOW, kind="import", reason="t")
    store = open_store(path)
    ids = [m.id for m in store.memories()][:3]
    tx = Service(clock=lambda: NOW).merges.merge(store, ids, content=None)
    merged_id = tx.details["merged"]
    assert {store.get(i).status for i in ids} == {Status.MERGED}
    Service(clock=lambda: NOW).merges.restore(store, ids[1])
    assert {store.get(i).status for i in ids} == {Status.ACTIVE}
    assert store.get(merged_id).status is Status.DELETED
    restore_tx = store.history()[0]
    assert restore_tx.kind == "restore" and set(restore_tx.memory_ids) == {*ids, merged_id}


def test_restore_on_pi_brings_members_back_from_the_ledger(
    fixture_copy: Callable[[str], Path],
) -> None:
    path = fixture_copy("realistic-store.json")
    original = open_store(path).memories()
    store = open_store(path)
    ids = [original[3].id, original[4].id]
    tx = Service(clock=lambda: NOW).merges.merge(store, ids, content=None)
    assert len(open_store(path)) == 299
    chain = Service().merges.lineage(open_store(path), ids[0])
    assert chain.superseded_by == [tx.details["merged"]]
    Service(clock=lambda: NOW).merges.restore(open_store(path), ids[0])
    again = open_store(path)
    assert len(again) == 300 and tx.details["merged"] not in {m.id for m in again.memories()}
    assert [m.id for m in again.memories()] == [m.id for m in original]


def test_merge_refuses_entries_of_different_users(fixture_copy: Callable[[str], Path]) -> None:
    store = open_store(fixture_copy("items.jsonl"))
    with pytest.raises(MemtuiError, match="different users"):
        Service(clock=lambda: NOW).merges.merge(store, ["1", "8"], content=None)


def test_plan_json_round_trips() -> None:
    _, plan = _plan(FIXTURES / "items.jsonl", "longterm")
    data = plan.to_dict()
    assert data["format"] == "memtui-plan" and data["version"] == 1
    assert set(data) >= {
        "store",
        "store_fingerprint",
        "profile",
        "now",
        "params",
        "actions",
        "summary",
    }
    again, _ = parse(data, "plan.json")
    assert again.to_dict() == data


def test_stale_or_foreign_plans_are_refused(fixture_copy: Callable[[str], Path]) -> None:
    path = fixture_copy("items.jsonl")
    _store, plan = _plan(path, "longterm")
    other = fixture_copy("records.jsonl")
    with pytest.raises(MemtuiError, match="was made for"):
        apply_plan(open_store(other), plan, None, now=NOW)
    outsider = open_store(path)
    edited = outsider.get("1").with_(content="用户现在只喝茶")
    from memtui.stores import Change

    outsider.commit(
        [Change(outsider.get("1"), edited)], actor="user", kind="edit", reason="", now=NOW
    )
    data = path.read_bytes()
    with pytest.raises(MemtuiError, match="changed since"):
        apply_plan(open_store(path), plan, None, now=NOW)
    assert path.read_bytes() == data
