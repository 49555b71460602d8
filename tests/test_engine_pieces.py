"""The engine pieces shared by several callers: the time parser, the decay chooser, the active
pairs path, and LLM strategies that leave the caller's plan as it was."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from memtui.engine.decay import decay_for
from memtui.engine.grouping import active_pairs, pair_components
from memtui.engine.llm_strategies import improve_plan
from memtui.engine.planner import make_plan
from memtui.engine.profiles import get_profile
from memtui.llm import LlmClient, LlmSettings, MemoryCache
from memtui.model import Status
from memtui.times import parse_iso_or_none
from tests.conftest import NOW
from tests.fake_llm import FakeLLM, answer
from tests.test_llm import _identity as _entry


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-30T12:00:00Z", datetime(2026, 11, 30, 12, tzinfo=UTC)),
        ("2026-11-30T13:00:00+01:00", datetime(2026, 11, 30, 12, tzinfo=UTC)),
        ("yesterday", None),
        ("", None),
        (None, None),
        ("0001-01-01T00:00:00Z", None),
        ("0001-01-01T00:30:00+01:00", None),  # a real time, but before year 1 in UTC
    ],
)
def test_parse_iso_or_none(text: str | None, expected: datetime | None) -> None:
    assert parse_iso_or_none(text) == expected


def test_decay_for_the_profile_or_a_named_model() -> None:
    pi = decay_for(get_profile("pi"))
    assert pi is not None and (pi.name, pi.rate) == ("pi", 0.95)
    # thesearch does not write decay back, but weighs with its half-life model
    thesearch = decay_for(get_profile("thesearch"))
    assert thesearch is not None and thesearch.name == "halflife"
    named = decay_for(get_profile("longterm"), "pi")
    assert named is not None and (named.name, named.rate) == ("pi", 0.95)


def test_active_pairs_and_components_leave_other_statuses_out() -> None:
    memories = [
        _entry("1", "user lives in berlin and works at a startup", 90),
        _entry("2", "user lives in berlin and works at a startup now", 60),
        _entry("3", "user lives in berlin and works at a startup today", 2).with_(
            status=Status.ARCHIVED
        ),
        _entry("4", "the cat is called miso", 5),
    ]
    live, pairs = active_pairs(memories, "tf-cosine", 0.5)
    assert [m.id for m in live] == ["1", "2", "4"]
    assert [(p.a, p.b) for p in pairs] == [("1", "2")]
    groups = pair_components(memories, "tf-cosine", 0.5)
    assert [[m.id for m in g] for g in groups] == [["1", "2"]]


@pytest.fixture
def judge() -> Iterator[FakeLLM]:
    server = FakeLLM(lambda seen, n: answer({"contradicts": ["1"]}))
    yield server
    server.close()


def test_conflict_judge_leaves_the_callers_plan_as_it_was(
    judge: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMTUI_TEST_KEY", "sk-test")
    memories = [
        _entry("1", "user lives in berlin and works at a startup", 90),
        _entry("2", "user lives in berlin and works for a bank", 60),
        _entry("3", "user lives in berlin and works at google now", 2),
    ]
    profile = get_profile("longterm")
    plan = make_plan(memories, profile, NOW, store_format="longterm")
    planned = plan.to_dict()
    assert any(a.kind == "conflict" for a in plan.actions)
    settings = LlmSettings(url=judge.url, model="m", api_key_env="MEMTUI_TEST_KEY")
    client = LlmClient(settings, MemoryCache())
    better = asyncio.run(improve_plan(plan, memories, profile, client, ["conflict"], NOW))
    assert any(a.kind == "supersede" for a in better.actions)
    assert plan.to_dict() == planned


def test_a_longterm_reason_names_the_score_it_used() -> None:
    from memtui.engine.planner import make_plan
    from memtui.engine.profiles import PROFILES
    from memtui.stores import open_store
    from tests.conftest import FIXTURES, NOW

    memories = open_store(FIXTURES / "items.jsonl").memories()
    absorbs = [
        a for a in make_plan(memories, PROFILES["longterm"], NOW).actions if a.kind == "absorb"
    ]
    assert absorbs and all("(embedding cosine " in a.reason for a in absorbs)
    bare = [m.with_(embedding=None) for m in memories]
    absorbs = [a for a in make_plan(bare, PROFILES["longterm"], NOW).actions if a.kind == "absorb"]
    assert all("(tf-cosine " in a.reason for a in absorbs)
