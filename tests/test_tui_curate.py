"""Curating in the TUI: hand-merge, plan review, clusters, decay, history and undo."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from itertools import combinations
from pathlib import Path

import orjson
import pytest
from textual.pilot import Pilot

from memtui.engine.decay import model
from memtui.engine.profiles import get_profile
from memtui.model import Status
from memtui.service.base import record_of
from memtui.stores import Change, open_store
from memtui.tui import make_app
from memtui.tui.app import MemtuiApp
from memtui.tui.modals import ConfirmScreen
from memtui.tui.screens.clusters import ClustersScreen
from memtui.tui.screens.decay import DecayScreen
from memtui.tui.screens.history import HistoryScreen
from memtui.tui.screens.merge import MergeScreen
from memtui.tui.screens.plan import PlanScreen
from memtui.tui.widgets.chart import ChartView
from memtui.tui.widgets.memory_table import MemoryTable
from tests.conftest import NOW, CliResult, assert_same_but_versions

os.environ["TEXTUAL_ANIMATIONS"] = "none"


async def ready(pilot: Pilot) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def app_for(path: Path) -> MemtuiApp:
    return make_app(str(path), now=NOW, watch_interval=0)


async def settled(pilot: Pilot, before: int) -> None:
    """Wait until the commit started after `before` has ended (done or refused)."""
    for _ in range(200):
        await pilot.pause(0.02)
        if pilot.app.commits_settled > before:  # type: ignore[attr-defined]
            break
    await ready(pilot)


async def confirm(pilot: Pilot) -> None:
    before = pilot.app.commits_settled  # type: ignore[attr-defined]
    await pilot.press("ctrl+s")
    await pilot.pause()
    assert isinstance(pilot.app.screen, ConfirmScreen)
    await pilot.press("y")
    await settled(pilot, before)


def memories_table(path: Path) -> bytes:
    return orjson.dumps(orjson.loads(path.read_bytes())["memories"])


@pytest.mark.parametrize("name", ["realistic-store.json", "demo"])
async def test_hand_merge_then_undo_gives_back_the_store(
    name: str, fixture_copy: Callable[[str], Path], tmp_path: Path
) -> None:
    if name == "demo":
        from memtui.demo import make_demo_memories
        from memtui.stores import create_native_store

        path = tmp_path / "demo.json"
        create_native_store(path, make_demo_memories(150, 2, NOW), now=NOW, kind="demo", reason="t")
    else:
        path = fixture_copy(name)
    before = path.read_bytes()
    app = app_for(path)
    async with app.run_test(size=(130, 38)) as pilot:
        await ready(pilot)
        # two entries of one user
        first = app.model.memory_at(0)
        assert first is not None
        partner = next(
            app.model.memory_at(r)
            for r in range(1, 50)
            if app.model.memory_at(r).user_id == first.user_id
        )  # type: ignore[union-attr]
        table = app.query_one(MemoryTable)
        await pilot.press("space")
        table.cursor = app.model.position_of(partner.id)  # type: ignore[assignment]
        await pilot.press("space", "m")
        await pilot.pause()
        assert isinstance(app.screen, MergeScreen)
        await confirm(pilot)
        assert not isinstance(app.screen, MergeScreen)
        store = open_store(path)
        statuses = {record_of(store, i).status for i in (first.id, partner.id)}  # type: ignore[union-attr]
        assert statuses == {Status.MERGED}
        merged = store.history()[0]
        assert merged.kind == "merge" and len(merged.changes) == 3
        assert any(merged.details["merged"] == m.id for m in app.model.memories)
        commits = app.commits_settled
        await pilot.press("u")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        said = app.screen.body.plain
        assert "2 entries go back to how they were before it; the 1 entry it created" in said
        await pilot.press("y")
        await settled(pilot, commits)
    if name == "demo":  # the native file also holds the ledger: the entries are byte-equal
        assert memories_table(path) == orjson.dumps(orjson.loads(before)["memories"])
    else:
        assert path.read_bytes() == before


async def test_merge_refuses_different_users(fixture_copy: Callable[[str], Path]) -> None:
    path = fixture_copy("items.jsonl")
    app = app_for(path)
    async with app.run_test(size=(130, 38)) as pilot:
        await ready(pilot)
        app.model.marked = {"1", "8"}
        await pilot.press("m")
        await pilot.pause()
        assert not isinstance(app.screen, MergeScreen)
        assert any("different users" in n.message for n in app._notifications)


async def test_merge_in_own_words(fixture_copy: Callable[[str], Path]) -> None:
    path = fixture_copy("items.jsonl")
    app = app_for(path)
    async with app.run_test(size=(130, 38)) as pilot:
        await ready(pilot)
        app.model.marked = {"1", "2"}
        await pilot.press("m")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, MergeScreen)
        editor = screen.query_one("#editor")
        editor.text = "用户很喜欢喝咖啡"  # type: ignore[attr-defined]
        await pilot.pause()
        assert screen.strategy == "own"
        await confirm(pilot)
    store = open_store(path)
    merged = store.get(store.history()[0].details["merged"])
    assert merged.content == "用户很喜欢喝咖啡" and merged.supersedes == ("1", "2")


def merged_id_shown(screen: MergeScreen) -> str:
    """The id the merge screen says the merged entry gets."""
    import re

    shown = str(screen.query_one("#result-body").render())
    found = re.search(r"^\s*id (\S+)$", shown, re.MULTILINE)
    assert found, shown
    return found.group(1)


async def test_merge_preview_shows_the_next_id_after_a_commit(
    fixture_copy: Callable[[str], Path],
) -> None:
    path = fixture_copy("items.jsonl")
    top = max(int(m.id) for m in open_store(path).memories())
    app = app_for(path)
    async with app.run_test(size=(130, 38)) as pilot:
        await ready(pilot)
        app.model.marked = {"1", "2"}
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, MergeScreen)
        assert merged_id_shown(app.screen) == str(top + 1)
        await confirm(pilot)
        assert str(top + 1) in {m.id for m in app.model.memories}
        app.model.marked = {"8", "9"}
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, MergeScreen)
        # the id the first merge took is not offered again
        assert merged_id_shown(app.screen) == str(top + 2)
        await pilot.click("#editor")
        await pilot.press(*"tea")
        await pilot.pause(MergeScreen.PREVIEW_DELAY + 0.1)
        await pilot.pause()
        assert app.screen.strategy == "own" and "tea" in (app.screen.own_text or "")
        assert merged_id_shown(app.screen) == str(top + 2)


async def test_history_shows_loading_then_its_rows(
    fixture_copy: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from memtui.service.undo import Ledger

    path = fixture_copy("items.jsonl")
    store = open_store(path)
    m = store.get("3")
    store.commit(
        [Change(m, m.with_(importance=0.05))], actor="user", kind="edit", reason="edit 3", now=NOW
    )
    release = threading.Event()
    backups = Ledger.backups

    def slow_backups(self: Ledger, store: object) -> object:
        release.wait(timeout=30)
        return backups(self, store)  # type: ignore[arg-type]

    monkeypatch.setattr(Ledger, "backups", slow_backups)
    app = app_for(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press("h")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        title = screen.query_one("#title")
        assert "loading the ledger" in str(title.render())
        await pilot.press("j", "k")  # the screen answers keys while the ledger is read
        release.set()
        await ready(pilot)
        assert "1 transaction ·" in str(title.render())
        rows = screen.query_one("#list")
        assert rows.option_count == 1  # type: ignore[attr-defined]
        assert "edit 3" in str(rows.get_option_at_index(0).prompt)  # type: ignore[attr-defined]
        await pilot.press("b")
        assert "backups" in str(title.render())


async def test_plan_review_applies_exactly_the_approved_actions(
    fixture_copy: Callable[[str], Path],
) -> None:
    path = fixture_copy("realistic-store.json")
    original = {m.id: m for m in open_store(path).memories()}
    app = app_for(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press("p")
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, PlanScreen) and screen.plan is not None
        plan = screen.plan
        # reject everything, then approve one merge: its decay dependencies come along
        screen.set_approved({a.id for a in plan.actions}, False)
        merge = next(a for a in plan.actions if a.kind == "merge")
        screen.set_approved({merge.id}, True)
        assert screen.approved == {merge.id, *merge.depends_on}
        await confirm(pilot)
        assert not isinstance(app.screen, PlanScreen)
    after = {m.id: m for m in open_store(path).memories()}
    changed = {i for i in original if after.get(i) != original[i]} | (
        after.keys() - original.keys()
    )
    assert changed == set(merge.targets)


async def test_rejecting_an_action_rejects_what_depends_on_it(
    fixture_copy: Callable[[str], Path],
) -> None:
    path = fixture_copy("items.jsonl")
    app = app_for(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press("p")
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, PlanScreen) and screen.plan is not None
        absorb = next(a for a in screen.plan.actions if a.kind == "absorb")
        first_dep = absorb.depends_on[0]
        screen.set_approved({first_dep}, False)
        assert absorb.id not in screen.approved


async def test_apply_refused_when_the_store_changed_outside(
    fixture_copy: Callable[[str], Path],
) -> None:
    path = fixture_copy("items.jsonl")
    app = app_for(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press("p")
        await ready(pilot)
        outsider = open_store(path)
        one = outsider.get("1")
        outsider.commit(
            [Change(one, one.with_(content="用户只喝茶"))],
            actor="user",
            kind="edit",
            reason="agent",
            now=NOW,
        )
        data = path.read_bytes()
        await confirm(pilot)
        assert isinstance(app.screen, PlanScreen)  # still reviewing: nothing applied
        assert any("changed since" in n.message for n in app._notifications)
    assert path.read_bytes() == data


async def save_plan_as(pilot: Pilot, out: Path) -> None:
    """`w` in the plan review, the file's path typed, enter: the plan saved."""
    await pilot.press("w")
    await pilot.pause()
    pilot.app.screen.query_one("#path").value = str(out)  # type: ignore[attr-defined]
    await pilot.press("enter")
    await ready(pilot)


async def test_saved_plan_is_what_memtui_apply_reads(
    fixture_copy: Callable[[str], Path], tmp_path: Path
) -> None:
    path = fixture_copy("items.jsonl")
    out = tmp_path / "plan.json"
    app = app_for(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press("p")
        await ready(pilot)
        await save_plan_as(pilot, out)
    plan = json.loads(out.read_text())
    assert plan["format"] == "memtui-plan" and plan["summary"]["absorb"] == 2


async def test_a_saved_plan_keeps_the_decisions_made_in_review(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    from memtui.demo import make_demo_memories
    from memtui.stores import create_native_store

    path = tmp_path / "demo.json"
    create_native_store(path, make_demo_memories(300, 5, NOW), now=NOW, kind="demo", reason="t")
    out = tmp_path / "plan.json"
    app = app_for(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press("p")
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, PlanScreen) and screen.plan is not None
        absorb = next(a.id for a in screen.plan.actions if a.kind in ("absorb", "merge"))
        waiting = next(a.id for a in screen.plan.actions if a.needs_decision)
        screen.set_approved({absorb}, False)
        screen.set_approved({waiting}, True)
        await save_plan_as(pilot, out)
        assert screen.unsaved() is None
        screen.read_plan_file(str(out))
        await ready(pilot)
        assert absorb not in screen.approved and waiting in screen.approved
    saved = json.loads(out.read_text())["decisions"]
    assert absorb in saved["rejected"] and waiting in saved["approved"]
    result = cli("apply", path, out, "--yes")
    assert result.code == 0, result.err
    history = json.loads(cli("history", path, "--json").out)
    assert absorb not in history[0]["details"]["actions"]
    assert waiting in history[0]["details"]["actions"]


async def test_cluster_threshold_moves_the_clusters(fixture_copy: Callable[[str], Path]) -> None:
    path = fixture_copy("realistic-store.json")
    app = app_for(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press("c")
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, ClustersScreen) and screen.result is not None
        assert screen.result.threshold == 0.3
        low = len(screen.result.clusters)
        for _ in range(10):
            await pilot.press("plus")
        await ready(pilot)
        assert screen.result.threshold == 0.8
        high = len(screen.result.clusters)
        assert high != low
        sizes = [len(c) for c in screen.result.clusters]
        assert all(s >= 2 for s in sizes)


async def test_y_and_n_in_the_clusters_view_label_clusters_for_calibration(
    fixture_copy: Callable[[str], Path], cli: Callable[..., CliResult]
) -> None:
    path = fixture_copy("realistic-store.json")
    data = path.read_bytes()
    app = app_for(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press("c")
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, ClustersScreen) and screen.result is not None
        first, second = screen.result.clusters[:2]
        await pilot.press("y")  # the first cluster is one memory; the cursor moves on
        await pilot.press("n")  # no two of the second are one memory (asked first: 3 or more)
        await pilot.pause()
        assert len(second) > 2 and isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await pilot.pause()
    assert path.read_bytes() == data  # labels live beside the store, never in it
    labels = json.loads(cli("labels", path, "--json").out)
    verdicts = {tuple(label["ids"]): label["same"] for label in labels}
    different = {tuple(sorted(pair)): False for pair in combinations(second, 2)}
    assert verdicts == {tuple(sorted(first)): True, **different}


async def test_decay_view_shows_the_engines_values(fixture_copy: Callable[[str], Path]) -> None:
    path = fixture_copy("realistic-store.json")
    app = app_for(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        memory = app.query_one(MemoryTable).current
        assert memory is not None
        await pilot.press("d")
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, DecayScreen)
        data = screen.query_one(ChartView).data
        pi = model("pi")
        [series] = [s for s in data.series if s.label.startswith("pi")]
        for day, value in series.points:
            assert value == pi.value_at(memory, NOW, day)
        assert data.lines[0][0] == get_profile("pi").archive_line
        crossing = pi.crossing_day(memory, NOW, 0.2)
        if crossing is not None and crossing <= 30:
            assert data.marks[0][0] == crossing


async def test_history_shows_transactions_and_undoes_from_there(
    fixture_copy: Callable[[str], Path],
) -> None:
    path = fixture_copy("items.jsonl")
    original = path.read_bytes()
    store = open_store(path)
    for ident in ("3", "7"):
        m = store.get(ident)
        store.commit(
            [Change(m, m.with_(importance=0.05))],
            actor="user",
            kind="edit",
            reason=f"edit {ident}",
            now=NOW,
        )
    app = app_for(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press("h")
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        assert [t.reason for t in screen.transactions] == ["edit 7", "edit 3"]
        before = app.commits_settled
        await pilot.press("u", "y")
        await settled(pilot, before)
        assert [t.kind for t in screen.transactions][:1] == ["undo"]
        await pilot.press("down", "down", "u", "y")  # the older edit
        await settled(pilot, before + 1)
    assert_same_but_versions(path.read_bytes(), original)


async def test_plan_review_with_the_model_marks_its_actions(
    fixture_copy: Callable[[str], Path],
) -> None:
    from memtui.config import Settings
    from tests.fake_llm import FakeLLM, answer

    server = FakeLLM(
        lambda seen, n: answer({"mergedContent": "PPT 字体：主标题 18-20px，中心词 26px"})
    )
    try:
        path = fixture_copy("example-store.json")
        settings = Settings(llm={"url": server.url, "model": "local-test"})
        app = make_app(str(path), settings, now=NOW, watch_interval=0)
        async with app.run_test(size=(140, 40)) as pilot:
            await ready(pilot)
            await pilot.press("p")
            await ready(pilot)
            screen = app.screen
            assert isinstance(screen, PlanScreen)
            box = screen.query_one("#use-llm")
            assert "local-test" in str(box.label) and not box.disabled  # type: ignore[attr-defined]
            box.value = True  # type: ignore[attr-defined]
            for _ in range(100):
                await pilot.pause(0.05)
                if screen.plan is not None and "llm" in screen.plan.params:
                    break
            await ready(pilot)
            assert screen.plan is not None
            [merge] = [a for a in screen.plan.actions if a.kind == "merge"]
            assert merge.actor == "llm"
            label = str(screen._action_nodes[merge.id].label)
            assert "[model]" in label
    finally:
        server.close()
