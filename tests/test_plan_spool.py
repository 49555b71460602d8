"""The encoding a user's part travels in (service/plan_spool.py: from a worker to the parent,
and through the streamed plan's spool) gives back the same actions: every field, every record,
the store's own entries as the very objects, a record two actions share as one object; and
`memtui plan` without --jobs picks the workers by itself and writes the same file."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtui.demo.generate import make_demo_memories
from memtui.engine.plan import Action
from memtui.engine.planner import by_user, plan_user, store_wide
from memtui.engine.profiles import get_profile
from memtui.model import Memory
from memtui.service import parallel_plan
from memtui.service.parallel_plan import MOST_JOBS, SMALL_STORE, default_jobs, usable_cores
from memtui.service.plan_spool import Decoder, dumps, encode, loads, places
from memtui.stores import create_native_store
from tests.conftest import NOW, CliResult

PLAN_NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _round_trip(actions: list[Action], memories: list[Memory]) -> tuple[list[Action], set[int]]:
    held: set[int] = set()
    prints: dict[int, str] = {}
    data = loads(dumps(encode(actions, places(memories))))
    back = list(Decoder(memories, held, prints).actions(data))
    store = {id(m) for m in memories}
    assert {id(m) for a in actions for m in a.before if id(m) in store} <= set(prints)
    return back, held


@pytest.mark.parametrize("profile", ["longterm", "default", "thesearch"])
def test_a_users_actions_come_back_the_same(profile: str) -> None:
    memories = make_demo_memories(600, 5, PLAN_NOW)
    chosen = get_profile(profile)
    wide = store_wide(memories, chosen)
    actions = plan_user(by_user(memories)[0], chosen, PLAN_NOW, wide).actions
    assert len({a.kind for a in actions}) >= 2
    back, _ = _round_trip(actions, memories)
    assert [a.to_dict() for a in back] == [a.to_dict() for a in actions]
    store = {id(m) for m in memories}
    for was, now in zip(actions, back, strict=True):
        for old, new in zip([*was.before, *was.after], [*now.before, *now.after], strict=True):
            assert (old is new) == (id(old) in store)  # the store's entries are not copied


def test_a_record_two_actions_share_is_one_object_and_changes_keep_their_type() -> None:
    entry = Memory(id="m1", content="the build uses make", importance=1)
    decayed = entry.with_(importance=1.0, tags=("build",))  # 1 → 1.0: equal, written apart
    first = Action("a1", "decay", ["m1"], [entry], [decayed], "r", {}, "decayed")
    second = Action("a2", "expire", ["m1"], [decayed], [decayed.with_(content="x")], "r", {}, "")
    back, held = _round_trip([first, second], [entry])
    assert back[0].before[0] is entry
    assert back[0].after[0] is back[1].before[0]  # the shared record, once
    assert id(back[1].before[0]) in held
    assert type(back[0].after[0].importance) is float and back[0].after[0].tags == ("build",)
    assert back[1].after[0].content == "x" and back[1].after[0].importance == 1.0


def test_the_default_workers_follow_the_store_and_the_cores() -> None:
    assert default_jobs(SMALL_STORE - 1, 50) == 1
    assert default_jobs(10 * SMALL_STORE, 1) == 1
    assert default_jobs(10 * SMALL_STORE, 50) == min(usable_cores(), MOST_JOBS)
    assert default_jobs(10 * SMALL_STORE, 2) == min(usable_cores(), 2)


def test_plan_without_jobs_uses_the_workers_and_writes_the_same_file(
    tmp_path: Path, cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    memories = make_demo_memories(500, 7, PLAN_NOW)
    memories = [m.with_(user_id=f"user-{i % 3}") for i, m in enumerate(memories)]
    store = tmp_path / "store.json"
    create_native_store(store, memories, now=NOW, kind="import", reason="test")
    monkeypatch.setattr(parallel_plan, "SMALL_STORE", 100)
    monkeypatch.setattr(parallel_plan, "usable_cores", lambda: 2)
    used: list[int] = []
    pool = parallel_plan.each_result

    def counted(*args: object, **kwargs: object) -> object:
        used.append(len(args[0]))  # type: ignore[arg-type]
        return pool(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(parallel_plan, "each_result", counted)
    files = []
    for extra in ([], ["--jobs", "1"]):
        out = tmp_path / f"plan{len(extra)}.json"
        result = cli(
            "plan", store, "--profile", "default", "--now", "2026-12-01T00:00:00Z",
            "--out", out, *extra,
        )  # fmt: skip
        assert result.code == 0, result.err
        files.append(out.read_bytes())
    assert used == [3]  # the default planned the three users in workers; --jobs 1 did not
    assert files[0] == files[1]


def test_an_actions_row_hint_comes_with_it_and_not_once_its_records_change() -> None:
    from memtui.planfile.compact import RowHints
    from memtui.service.plan_spool import Hints

    memories = make_demo_memories(600, 5, PLAN_NOW)
    chosen = get_profile("longterm")
    wide = store_wide(memories, chosen)
    actions = plan_user(by_user(memories)[0], chosen, PLAN_NOW, wide).actions
    hints = RowHints(PLAN_NOW, chosen.to_dict())
    latest = Hints()
    data = loads(dumps(encode(actions, places(memories), hints)))
    seen = []
    for was, action in zip(
        actions, Decoder(memories, set(), {}, latest).actions(data), strict=True
    ):
        seen.append(latest(action))
        assert seen[-1] == hints(was)
    assert {type(h) for h in seen} == {bool, tuple, type(None)}  # decays, absorbs, the rest
    decay = next(a for a in actions if a.kind == "decay" and hints(a))
    [back] = Decoder(memories, set(), {}, latest).actions(
        loads(dumps(encode([decay], places(memories), hints)))
    )
    assert latest(back) is True
    back.after = [back.after[0].with_(content="renamed by the join")]
    assert latest(back) is None  # found again by the writer
    assert latest(decay) is None  # not the action decoded last
