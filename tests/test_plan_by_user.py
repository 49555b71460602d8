"""Plans made one user at a time, in this process or in worker processes, are the plan of the
whole store byte for byte (issue 24 items 2-3): the actions in the same order with the same
ids, dependencies, new entries, reasons and holds."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from itertools import groupby
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtui.demo.generate import make_demo_memories
from memtui.engine.plan import Plan
from memtui.engine.planner import (
    by_user,
    join_users,
    make_plan,
    plan_each_user,
    plan_user,
    store_wide,
)
from memtui.engine.profiles import get_profile
from memtui.model import Memory
from memtui.service import Service
from memtui.service.parallel_plan import SMALL_STORE, default_jobs, plan_in_parallel
from memtui.stores import create_native_store, open_store
from memtui.stores.formats.longterm import LongtermFormat
from memtui.traits import OWN_IDS, IdStyle
from tests.conftest import FIXTURES, NOW, CliResult

PLAN_NOW = datetime(2026, 12, 1, tzinfo=UTC)
LONGTERM_IDS = LongtermFormat.traits.ids  # the Go system numbers new entries


def _in_turn(size: int, users: int, seed: int = 11) -> list[Memory]:
    """A generated store whose users take turns, so every step's actions interleave."""
    memories = make_demo_memories(size, seed, PLAN_NOW)
    return [m.with_(user_id=f"user-{i % users}") for i, m in enumerate(memories)]


def _joined(memories: list[Memory], profile_name: str, ids: IdStyle = OWN_IDS) -> Plan:
    profile = get_profile(profile_name)
    wide = store_wide(memories, profile)
    parts = [plan_user(entries, profile, PLAN_NOW, wide, ids=ids) for entries in by_user(memories)]
    return join_users(parts, memories, profile, PLAN_NOW, wide, ids=ids)


@pytest.mark.parametrize("profile", ["longterm", "default", "thesearch"])
def test_a_plan_made_user_by_user_is_the_whole_store_plan(profile: str) -> None:
    memories = _in_turn(1500, 6)
    whole = make_plan(memories, get_profile(profile), PLAN_NOW)
    joined = _joined(memories, profile)
    # every step's actions would interleave the users: the plan has each user's together
    assert [u for u, _ in groupby(a.before[0].user_id for a in whole.actions)] == [
        f"user-{n}" for n in range(6)
    ]
    assert [a.id for a in whole.actions] == [f"a{n}" for n in range(1, len(whole.actions) + 1)]
    assert joined.to_dict() == whole.to_dict()


@pytest.mark.parametrize("name", ["realistic-store.json", "example-store.json"])
def test_the_fixture_stores_plan_the_same_user_by_user(name: str) -> None:
    memories = open_store(str(FIXTURES / name)).memories()
    for profile in ("longterm", "default", "thesearch"):
        whole = make_plan(memories, get_profile(profile), PLAN_NOW)
        assert plan_each_user(memories, get_profile(profile), PLAN_NOW).to_dict() == (
            whole.to_dict()
        )


def test_the_subject_tier_scores_a_user_alike_whatever_the_other_users_say() -> None:
    # the demo's own users: a user's subject matrices summed their words in the order the
    # whole store's vocabulary first met them, a last bit apart from the user's own order,
    # and one user's subject merges took other members (found in review, 2026-12-03)
    memories = make_demo_memories(2500, 9, PLAN_NOW)
    assert len({m.user_id for m in memories}) > 1
    whole = make_plan(memories, get_profile("default"), PLAN_NOW)
    assert plan_each_user(memories, get_profile("default"), PLAN_NOW).to_dict() == (whole.to_dict())


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    size=st.integers(60, 400),
    users=st.integers(2, 5),
    seed=st.integers(0, 10_000),
    profile=st.sampled_from(["longterm", "default"]),
)
def test_generated_multi_user_stores_plan_the_same(
    size: int, users: int, seed: int, profile: str
) -> None:
    memories = make_demo_memories(size, seed, PLAN_NOW)
    memories = [m.with_(user_id=f"u{(i * 7 + seed) % users}") for i, m in enumerate(memories)]
    whole = make_plan(memories, get_profile(profile), PLAN_NOW)
    assert plan_each_user(memories, get_profile(profile), PLAN_NOW).to_dict() == whole.to_dict()
    # no action touches two users' entries; each user's actions come together, the users in
    # the order the store has them
    for action in whole.actions:
        assert len({m.user_id for m in [*action.before, *action.after]}) == 1
    runs = [u for u, _ in groupby(a.before[0].user_id for a in whole.actions)]
    in_store = list(dict.fromkeys(m.user_id for m in memories))
    assert runs == [u for u in in_store if u in runs]


@pytest.mark.parametrize("profile", ["longterm", "default"])
def test_new_ids_are_the_whole_store_plan_s_when_users_draw_alike(profile: str) -> None:
    # longterm numbers new entries: each user alone takes the same next numbers, and the
    # subject tier's seeds name the first tier's new entries
    memories = _in_turn(900, 3)
    whole = make_plan(memories, get_profile(profile), PLAN_NOW, ids=LONGTERM_IDS)
    made = [a.after[0].id for a in whole.actions if a.kind == "merge"]
    assert len(made) == len(set(made)) > 3
    parts = [
        plan_user(u, get_profile(profile), PLAN_NOW, wide, ids=LONGTERM_IDS)
        for wide in [store_wide(memories, get_profile(profile))]
        for u in by_user(memories)
    ]
    assert len({part.actions[part.seeds[0][0]].after[0].id for part in parts}) == 1
    joined = _joined(memories, profile, LONGTERM_IDS)
    assert joined.to_dict() == whole.to_dict()


def test_worker_processes_make_the_one_process_plan() -> None:
    memories = _in_turn(1200, 5)
    profile = get_profile("default")
    stages: list[str] = []
    parallel = plan_in_parallel(
        memories, profile, PLAN_NOW, jobs=2, progress=lambda stage, _: stages.append(stage)
    )
    assert parallel.to_dict() == make_plan(memories, profile, PLAN_NOW).to_dict()
    assert stages[-1] == "users 5/5"  # progress counts users


def test_plan_jobs_writes_the_same_file(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    store = tmp_path / "store.json"
    create_native_store(store, _in_turn(900, 4), now=NOW, kind="import", reason="test")
    files = []
    for jobs in ("1", "2"):
        out = tmp_path / f"plan-{jobs}.json"
        result = cli(
            "plan", store, "--profile", "longterm", "--now", "2026-12-01T00:00:00Z",
            "--out", out, "--jobs", jobs,
        )  # fmt: skip
        assert result.code == 0, result.err
        files.append(out.read_bytes())
    assert files[0] == files[1]


def test_plan_jobs_must_be_one_or_more(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    store = tmp_path / "store.json"
    create_native_store(store, _in_turn(50, 2), now=NOW, kind="import", reason="test")
    before = store.read_bytes()
    result = cli("plan", store, "--jobs", "0")
    assert result.code == 2
    assert result.err.strip().splitlines()[-1] == "memtui: --jobs must be 1 or more"
    assert "Traceback" not in result.err
    assert store.read_bytes() == before


def test_one_process_plans_a_small_store_or_a_single_user() -> None:
    assert default_jobs(SMALL_STORE - 1, 50) == 1
    assert default_jobs(10 * SMALL_STORE, 1) == 1
    assert default_jobs(10 * SMALL_STORE, 50) >= 1


def test_the_service_plans_the_same_with_workers(tmp_path: Path) -> None:
    store_file = tmp_path / "store.json"
    memories = _in_turn(700, 3)
    create_native_store(store_file, memories, now=NOW, kind="import", reason="test")
    svc = Service()
    store = svc.stores.open(str(store_file))
    profile = svc.profiles.profile(store, "default")
    one = svc.plans.plan(store, profile, now=PLAN_NOW)
    two = svc.plans.plan(store, profile, now=PLAN_NOW, jobs=2)
    assert one.to_dict() == two.to_dict()
    assert one.actions


def test_memtui_plan_prints_ten_warnings_and_counts_the_rest(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    # twelve users each about to lose most of their entries: the guard holds each one
    memories = _in_turn(600, 12)
    memories = [m.with_(importance=0.01, tags=()) for m in memories]
    store = tmp_path / "store.json"
    create_native_store(store, memories, now=NOW, kind="import", reason="test")
    out = tmp_path / "plan.json"
    result = cli(
        "plan", store, "--profile", "longterm", "--now", "2026-12-01T00:00:00Z", "--out", out
    )  # fmt: skip
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    warnings = json.loads(out.read_bytes())["warnings"]
    assert len(warnings) == 12
    assert lines[:11] == [*warnings[:10], "… and 2 more warnings (the plan lists them all)"]
    assert lines[11].startswith("longterm plan for ")
