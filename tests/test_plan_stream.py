"""Plans streamed user by user (issue 24 item 2) write the file and the JSON of the whole-store
plan byte for byte: versions 1 and 2, sealed and not, one process and two, on stores whose
users take turns (every step's actions interleave), with held removals and new ids drawn
again."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtui import planfile
from memtui.demo.generate import make_demo_memories
from memtui.engine.planner import make_plan
from memtui.engine.profiles import get_profile
from memtui.model import Memory
from memtui.planfile.streaming import PlanWriter, tee
from memtui.service.plan_stream import StreamedPlan, plan_streamed
from memtui.stores import open_store
from memtui.stores.formats.longterm import LongtermFormat
from memtui.traits import OWN_IDS, IdStyle
from tests.conftest import FIXTURES, CliResult

PLAN_NOW = datetime(2026, 12, 1, tzinfo=UTC)
KEY = b"k" * 32


def _in_turn(size: int, users: int, seed: int = 11) -> list[Memory]:
    memories = make_demo_memories(size, seed, PLAN_NOW)
    return [m.with_(user_id=f"user-{i % users}") for i, m in enumerate(memories)]


def _streamed(
    memories: list[Memory], profile: str, version: int, indent: bool, key: bytes | None, jobs: int
) -> bytes:
    ids = LongtermFormat.traits.ids if profile == "longterm" else OWN_IDS
    sp = plan_streamed(memories, get_profile(profile), PLAN_NOW, ids=ids, jobs=jobs, store="s")
    return _file(sp, version, indent, key)


def _file(sp: StreamedPlan, version: int, indent: bool = False, key: bytes | None = None) -> bytes:
    """The file `memtui plan --out` writes of the streamed plan."""
    writer = PlanWriter(
        sp.head,
        version,
        indent=indent,
        seal_key=key,
        by_user=sp.by_user,
        prints=sp.prints,
        hints=sp.hints,
    )
    out: list[bytes] = []
    tee(sp.actions, [(writer, out.append)], lambda: sp.summary)
    return b"".join(out)


def _whole(
    memories: list[Memory], profile: str, version: int, indent: bool, key: bytes | None
) -> bytes:
    ids: IdStyle = LongtermFormat.traits.ids if profile == "longterm" else OWN_IDS
    plan = make_plan(memories, get_profile(profile), PLAN_NOW, ids=ids, store="s")
    return planfile.to_bytes(plan, version, indent=indent, seal_key=key)


@pytest.mark.parametrize("profile", ["longterm", "default", "thesearch", "pi"])
@pytest.mark.parametrize(("version", "indent"), [(2, False), (1, True), (1, False)])
def test_a_streamed_plan_file_is_the_whole_plan_file(
    profile: str, version: int, indent: bool
) -> None:
    memories = _in_turn(1200, 5)
    whole = _whole(memories, profile, version, indent, KEY)
    assert b'"actions":[]' not in whole.replace(b" ", b"")
    assert _streamed(memories, profile, version, indent, KEY, 1) == whole


@pytest.mark.parametrize("profile", ["longterm", "default"])
def test_held_removals_and_two_processes_stream_the_same_file(profile: str) -> None:
    # one user of three loses most of their entries: the guard holds them, the file says so
    memories = _in_turn(900, 3, seed=5)
    memories = [m.with_(importance=0.01) if m.user_id == "user-1" else m for m in memories]
    whole = _whole(memories, profile, 2, False, None)
    assert b'"warnings"' in whole
    assert _streamed(memories, profile, 2, False, None, 2) == whole
    assert _streamed(memories, profile, 1, True, KEY, 2) == _whole(memories, profile, 1, True, KEY)


@pytest.mark.parametrize("name", ["realistic-store.json", "example-store.json"])
def test_fixture_stores_stream_their_plan_files(name: str) -> None:
    store = open_store(FIXTURES / name)
    for profile in ("longterm", "default", "thesearch"):
        plan = make_plan(store.memories(), get_profile(profile), PLAN_NOW, ids=store.traits.ids)
        for version in (1, 2):
            sp = plan_streamed(
                store.memories(), get_profile(profile), PLAN_NOW, ids=store.traits.ids
            )
            got = _file(sp, version, indent=True, key=KEY)
            assert got == planfile.to_bytes(plan, version, seal_key=KEY), (profile, version)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    size=st.integers(40, 400),
    users=st.integers(2, 7),
    seed=st.integers(0, 10_000),
    profile=st.sampled_from(["longterm", "default", "thesearch"]),
    version=st.sampled_from([1, 2]),
)
def test_any_multi_user_store_streams_its_whole_plan_file(
    size: int, users: int, seed: int, profile: str, version: int
) -> None:
    memories = _in_turn(size, users, seed)
    whole = _whole(memories, profile, version, version == 1, KEY)
    assert _streamed(memories, profile, version, version == 1, KEY, 1) == whole


@pytest.mark.parametrize("json_out", [False, True])
def test_memtui_plan_prints_and_writes_the_same_when_it_streams(
    json_out: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., CliResult]
) -> None:
    import memtui.service.plans as plans

    store = tmp_path / "realistic-store.json"
    store.write_bytes((FIXTURES / "realistic-store.json").read_bytes())
    flags = ["--json"] if json_out else []
    runs = []
    for stream_from in (10**9, 0):  # the whole plan, then streamed
        monkeypatch.setattr(plans, "STREAM_FROM", stream_from)
        out = tmp_path / f"plan-{stream_from}.json"
        run = cli("plan", store, "--profile", "default", "--out", out, *flags)
        assert run.code == 0, run.err
        runs.append((run.out.replace(str(out), "PLAN"), out.read_bytes()))
    assert runs[0] == runs[1]


def test_a_streamed_plan_says_its_summary_only_once_its_actions_have_come() -> None:
    memories = [
        m.with_(user_id=f"u{i % 3}") for i, m in enumerate(make_demo_memories(300, 5, PLAN_NOW))
    ]
    whole = make_plan(memories, get_profile("longterm"), PLAN_NOW)
    plan = plan_streamed(memories, get_profile("longterm"), PLAN_NOW)
    with pytest.raises(RuntimeError, match="once its actions have come"):
        plan.summary  # noqa: B018
    assert len(list(plan.actions)) == len(whole.actions)
    assert plan.summary == whole.summary
