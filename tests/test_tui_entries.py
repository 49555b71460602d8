"""Changing one entry from the TUI (issue 11 item 12), the commit in progress (item 14) and the
decay view's list (item 15): each test drives the keys a user would and asserts what they see
and what the store then holds."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from textual import events
from textual.widgets import OptionList, Static

from memtui.model import Memory, Source, Status
from memtui.service.undo import Ledger
from memtui.stores import open_store
from memtui.stores.ledger import Transaction
from memtui.stores.progress import CommitProgress
from memtui.stores.protocol import MemoryStore
from memtui.tui.app import MemtuiApp
from memtui.tui.modals import ReasonConfirmScreen, WorkingScreen
from memtui.tui.screens.decay import DecayScreen
from memtui.tui.screens.entry_form import EntryFormScreen
from memtui.tui.widgets.memory_table import MemoryTable
from tests.conftest import NOW, unversioned
from tests.screen_text import screen_text
from tests.test_tui_walkthrough import app_for, notices, ready, settled, shown


@pytest.fixture
def demo_copy(tmp_path: Path) -> Path:
    from memtui.demo import make_demo_memories
    from memtui.stores import create_native_store

    path = tmp_path / "demo.json"
    create_native_store(path, make_demo_memories(120, 5, NOW), now=NOW, kind="demo", reason="t")
    return path


def highlighted(app: MemtuiApp) -> Memory:
    memory = app.home.query_one(MemoryTable).current
    assert memory is not None
    return memory


async def answer(app: MemtuiApp, pilot: object, *keys: str) -> None:
    """Press keys that end in a commit and wait until it has ended."""
    before = app.commits_settled
    await pilot.press(*keys)  # type: ignore[attr-defined]
    await settled(pilot, before)  # type: ignore[arg-type]


# -- item 12: edit, archive, delete, add -------------------------------------------------------


async def test_e_edits_an_entry_as_one_transaction_with_a_reason_and_u_undoes_it(
    fixture_copy: Callable[[str], Path],
) -> None:
    path = fixture_copy("items.jsonl")
    app = app_for(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        entry = highlighted(app)
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, EntryFormScreen)
        await pilot.press("end", *" (checked)")  # content: the one line, then more words
        await pilot.press("tab", "home", "ctrl+k", *"0.3")  # importance
        await pilot.press("tab", "home", "ctrl+k", *"preference")  # category
        await pilot.press("tab", "end", *", reviewed")  # tags
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ReasonConfirmScreen)
        asked = screen_text(app)
        for said in ("content", "importance", "category", "tags", "(checked)", "preference"):
            assert said in asked
        await pilot.press("r", *"seen in review")
        await pilot.press("enter")  # the reason ends; focus goes to Yes
        assert isinstance(app.screen, ReasonConfirmScreen)
        await answer(app, pilot, "enter")
        assert not isinstance(app.screen, (EntryFormScreen, ReasonConfirmScreen))
        assert any(f"Edited {entry.id}" in n for n in notices(app))
        after = open_store(path).get(entry.id)
        assert after.content == entry.content + " (checked)"
        assert after.importance == 0.3
        assert after.category == "preference"
        assert after.tags == (*entry.tags, "reviewed")
        tx = open_store(path).history()[0]
        assert (tx.kind, tx.reason) == ("edit", "seen in review")

        await answer(app, pilot, "u", "y")
        assert unversioned({"e": open_store(path).get(entry.id)}) == unversioned({"e": entry})


async def test_what_pi_cannot_hold_is_refused_with_the_reason(
    fixture_copy: Callable[[str], Path],
) -> None:
    path = fixture_copy("realistic-store.json")
    before = path.read_bytes()
    app = app_for(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        # archiving: pi holds active entries only
        await pilot.press("a")
        await pilot.pause()
        assert not isinstance(app.screen, ReasonConfirmScreen)
        assert any("pi stores hold active entries only" in n for n in notices(app))
        # content over pi's cap
        await pilot.press("e")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, EntryFormScreen)
        form.query_one("#content").post_message(events.Paste("x" * 600))
        await pilot.pause()
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is form
        assert "pi stores cap content at 500" in shown(form.query_one("#problem", Static))
        # leaving with the change asks first; n stays, then y leaves
        await pilot.press("escape")
        await pilot.pause()
        assert "Leave without saving?" in screen_text(app)
        await pilot.press("y")
        await pilot.pause()
        assert not isinstance(app.screen, EntryFormScreen)
    assert path.read_bytes() == before


async def test_delete_on_pi_moves_the_entry_to_the_ledger_and_u_brings_it_back(
    fixture_copy: Callable[[str], Path],
) -> None:
    path = fixture_copy("realistic-store.json")
    before = path.read_bytes()
    app = app_for(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        entry = highlighted(app)
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ReasonConfirmScreen)
        asked = " ".join(screen_text(app).split())
        assert "leaves the file" in asked and "ledger" in asked
        await answer(app, pilot, "y")
        store = open_store(path)
        assert store.find(entry.id) is None
        tx = store.history()[0]
        assert tx.kind == "status" and tx.changes[0].before_memory() == entry
        assert entry.id not in {m.id for m in app.model.memories}

        await answer(app, pilot, "u", "y")
    assert path.read_bytes() == before


async def test_archive_and_soft_delete_keep_the_entry_and_say_how_to_get_it_back(
    demo_copy: Path,
) -> None:
    app = app_for(demo_copy)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        entry = highlighted(app)
        await answer(app, pilot, "a", "y")
        assert open_store(demo_copy).get(entry.id).status is Status.ARCHIVED
        app.home.query_one(MemoryTable).cursor = app.model.position_of(entry.id) or 0
        await pilot.press("a")
        await pilot.pause()
        assert "Unarchive?" in screen_text(app)
        await answer(app, pilot, "y")
        assert open_store(demo_copy).get(entry.id).status is Status.ACTIVE

        app.home.query_one(MemoryTable).cursor = app.model.position_of(entry.id) or 0
        await pilot.press("x")
        await pilot.pause()
        assert "soft delete" in screen_text(app)
        await answer(app, pilot, "y")
        assert open_store(demo_copy).get(entry.id).status is Status.DELETED
        kinds = [t.kind for t in open_store(demo_copy).history()[:3]]
        assert kinds == ["status", "status", "status"]


async def test_a_new_memory_gets_its_user_and_u_removes_it(demo_copy: Path) -> None:
    app = app_for(demo_copy)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        user = highlighted(app).user_id
        count = len(open_store(demo_copy))
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, EntryFormScreen)
        await pilot.press("ctrl+s")  # nothing written yet
        await pilot.pause()
        assert "must not be empty" in shown(app.screen.query_one("#problem", Static))
        await pilot.press(*"Prefers tea in the afternoon")
        await pilot.press("tab", "home", "ctrl+k", *"0.6", "tab", "home", "ctrl+k", *"preference")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert f"for user {user}" in screen_text(app)
        await answer(app, pilot, "y")
        store = open_store(demo_copy)
        added = [m for m in store.memories() if m.content == "Prefers tea in the afternoon"]
        assert len(added) == 1 and len(store) == count + 1
        new = added[0]
        assert (new.user_id, new.category, new.importance) == (user, "preference", 0.6)
        assert new.source is Source.USER
        assert new.id in {m.id for m in app.model.memories}

        await answer(app, pilot, "u", "y")
        assert open_store(demo_copy).find(new.id) is None


async def test_u_twice_on_a_longterm_store_undoes_both_changes(
    fixture_copy: Callable[[str], Path],
) -> None:
    path = fixture_copy("items.jsonl")
    app = app_for(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        entry = highlighted(app)
        await answer(app, pilot, "a", "y")  # archived
        app.home.query_one(MemoryTable).cursor = app.model.position_of(entry.id) or 0
        await answer(app, pilot, "a", "y")  # active again
        await answer(app, pilot, "u", "y")
        await answer(app, pilot, "u", "y")
        assert not any("changed since" in n for n in notices(app)), notices(app)
    assert [t.kind for t in open_store(path).history()[:2]] == ["undo", "undo"]


# -- item 14: a commit in progress -------------------------------------------------------------


async def test_a_long_commit_shows_what_it_does_and_the_screen_stays_live(
    demo_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    real_undo = Ledger.undo

    def slow_undo(
        self: Ledger,
        store: MemoryStore,
        tx_id: int | None = None,
        progress: CommitProgress | None = None,
    ) -> Transaction:
        release.wait(30)
        return real_undo(self, store, tx_id, progress)

    monkeypatch.setattr(Ledger, "undo", slow_undo)
    app = app_for(demo_copy)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        entry = highlighted(app)
        await answer(app, pilot, "a", "y")
        await pilot.press("u", "y")
        for _ in range(200):
            if isinstance(app.screen, WorkingScreen):
                break
            await pilot.pause(0.02)
        assert isinstance(app.screen, WorkingScreen)
        await pilot.pause()
        text = shown(app.screen.query_one("#what")) + shown(app.screen.query_one("#stage"))
        assert "Undoing #2 (1 entry)" in text and "s elapsed" in text
        assert "writing" in text
        await pilot.press("q")  # waits while the store is written, then quits
        await pilot.pause()
        assert app.return_code is None and app.is_running
        assert any("it quits once that is written" in n for n in notices(app))
        release.set()
        for _ in range(3000):
            if not app.is_running:
                break
            await asyncio.sleep(0.01)
    assert app.return_code == 0
    assert open_store(demo_copy).get(entry.id).status is Status.ACTIVE


# -- item 15: pick an entry in the decay view --------------------------------------------------


async def test_enter_on_an_entry_that_crosses_the_line_shows_its_curve(demo_copy: Path) -> None:
    app = app_for(demo_copy)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await pilot.press("d")
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, DecayScreen)
        assert len(screen.going) > 2
        listed = screen.query_one("#going-list", OptionList)
        assert listed.option_count == len(screen.going)
        listed.highlighted = 0
        await pilot.press("down", "down", "enter")
        await pilot.pause()
        picked = screen.going[2][1]
        assert screen.memory is not None and screen.memory.id == picked.id
        summary = shown(screen.query_one("#entry-summary-body", Static))
        assert summary.startswith(picked.content[:40])
        assert "━━ default profile ×0.995/day" in screen_text(app)
