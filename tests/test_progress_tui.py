"""The working screen of a long commit: a progress bar that moves and the stage it is at,
while the rest of the app stays live. The store's progress reports are held one at a time
(an Event between them), so what the screen shows at each is deterministic."""

from __future__ import annotations

import asyncio
import os
import queue
import threading
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import ProgressBar

from memtui.demo import make_demo_memories
from memtui.engine.plan import Plan
from memtui.service import Service
from memtui.service.base import Shared
from memtui.service.plans import Plans
from memtui.stores import create_native_store, open_store
from memtui.stores.ledger import Transaction
from memtui.stores.progress import CommitProgress
from memtui.stores.protocol import MemoryStore
from memtui.tui import make_app
from memtui.tui.app import MemtuiApp
from memtui.tui.modals import ConfirmScreen, WorkingScreen
from memtui.tui.screens.plan import PlanScreen
from tests.conftest import NOW
from tests.test_tui_walkthrough import notices, ready, shown

os.environ["TEXTUAL_ANIMATIONS"] = "none"


class HeldPlans(Plans):
    """Every progress report of an apply waits for the test to let it go."""

    def __init__(self, shared: Shared) -> None:
        super().__init__(shared)
        self.reported: queue.Queue[tuple[str, int, int]] = queue.Queue()
        self.go = threading.Semaphore(0)

    def apply(
        self,
        store: MemoryStore,
        plan: Plan,
        approved: Sequence[str] | None = None,
        progress: CommitProgress | None = None,
    ) -> Transaction:
        def held(stage: str, done: int, total: int) -> None:
            if progress is not None:
                progress(stage, done, total)
            self.reported.put((stage, done, total))
            self.go.acquire(timeout=60)

        return super().apply(store, plan, approved, held)


class HeldService(Service):
    def __init__(self) -> None:
        super().__init__(clock=lambda: NOW)
        self.plans = self.held = HeldPlans(self.shared)


@pytest.fixture
def big_store(tmp_path: Path) -> Path:
    path = tmp_path / "store.json"
    create_native_store(path, make_demo_memories(3000, 3, NOW), now=NOW, kind="demo", reason="t")
    return path


async def until(pilot: Pilot, condition: Callable[[], bool]) -> None:
    """Let the app run until `condition` holds (a bound on the wait, not a timing check)."""
    for _ in range(3000):
        if condition():
            return
        await pilot.pause(0.01)
    raise AssertionError("the app never got there")


async def next_report(pilot: Pilot, service: HeldService) -> tuple[str, int, int] | None:
    """The report the commit is held at; None once the commit has ended."""
    app = pilot.app
    await until(
        pilot,
        lambda: not service.held.reported.empty() or app.committing is None,  # type: ignore[attr-defined]
    )
    return None if service.held.reported.empty() else service.held.reported.get_nowait()


async def test_the_working_screen_shows_each_stage_and_a_moving_bar(big_store: Path) -> None:
    service = HeldService()
    app = make_app(str(big_store), now=NOW, watch_interval=0, service=service)
    assert isinstance(app, MemtuiApp)
    before_bytes = big_store.read_bytes()
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press("p")
        await ready(pilot)
        assert isinstance(app.screen, PlanScreen) and app.screen.plan is not None
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        settled_before = app.commits_settled
        await pilot.press("y")
        seen: list[tuple[str, float, float | None, str]] = []  # report, bar, its total, text
        keys_answered = False
        while (report := await next_report(pilot, service)) is not None:
            stage, done, total = report
            await until(pilot, lambda: isinstance(app.screen, WorkingScreen))  # after a moment
            screen = app.screen
            assert isinstance(screen, WorkingScreen)
            shown_now = partial(lambda s, c: s.counts == c, screen, (done, total))
            await until(pilot, shown_now)  # the report reached the screen
            await pilot.pause()
            bar = screen.query_one("#bar", ProgressBar)
            seen.append((stage, bar.progress, bar.total, shown(screen.query_one("#stage"))))
            if not keys_answered:
                await pilot.press("q")  # the app stays live while the commit is held
                await pilot.pause()
                keys_answered = any("quits once that is written" in n for n in notices(app))
                assert app.is_running  # q waits for the commit
            service.held.go.release()
        for _ in range(3000):  # q asked during the commit: memtui quits once it is written
            if not app.is_running:
                break
            await asyncio.sleep(0.01)
        assert app.commits_settled > settled_before
    assert keys_answered, notices(app)
    assert app.return_code == 0
    texts = [text for *_, text in seen]
    for name in ("checking the entries", "preparing the changes", "writing the store"):
        assert any(name in t for t in texts), (name, texts)
    checking = [(bar, total) for stage, bar, total, _ in seen if stage == "checking"]
    assert checking[0][0] == 0 and checking[-1][0] == checking[-1][1] > 1000
    assert any("of" in t and "," in t for t in texts)  # "checking the entries: 1,234 of 2,345"
    assert len({bar for _, bar, _, _ in seen}) > 2  # the bar moved
    assert big_store.read_bytes() != before_bytes
    assert open_store(str(big_store)).transactions()[-1].kind == "plan"
