"""Memory text is data in the editable fields too: an agent's escape sequences are shown as
visible escapes in the edit form and the merge editor (a text area would send them to the
terminal), and an entry saved without touching them keeps them byte for byte."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, TextArea

from memtui.model import Memory
from memtui.service import Service
from memtui.stores import create_native_store, open_store
from memtui.tui.modals import ReasonConfirmScreen
from memtui.tui.screens.entry_form import EntryFormScreen
from memtui.tui.screens.merge import MergeScreen
from memtui.tui.widgets.memory_table import MemoryTable
from tests.conftest import NOW
from tests.test_tui_walkthrough import app_for, ready, settled

HOSTILE = "Esc \x1b[31mRED\x1b[0m osc \x1b]0;pwned\x07 bidi \u202eevil\u202c [bold]b[/]"


def _store(tmp_path: Path) -> Path:
    path = tmp_path / "store.json"
    memories = [
        Memory(id="m1", content=HOSTILE, tags=("\x1b[7mtag",), importance=0.9, created_at=NOW),
        Memory(id="m2", content=HOSTILE + " again", importance=0.5, created_at=NOW),
    ]
    create_native_store(path, memories, now=NOW, kind="import", reason="test")
    return path


def _no_control(text: str) -> None:
    assert not any(ord(c) < 0x20 and c not in "\n\t" for c in text), repr(text)
    assert "\u202e" not in text


async def test_the_edit_form_shows_escapes_and_keeps_them_when_untouched(tmp_path: Path) -> None:
    path = _store(tmp_path)
    app = app_for(path)
    async with app.run_test(size=(120, 35)) as pilot:
        await ready(pilot)
        table = app.home.query_one(MemoryTable)
        while table.current is not None and table.current.id != "m1":
            await pilot.press("down")
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, EntryFormScreen)
        content = app.screen.query_one("#content", TextArea).text
        tags = app.screen.query_one("#tags", Input).value
        _no_control(content)
        _no_control(tags)
        assert "\\x1b[31mRED" in content and "\\u202e" in content and "[bold]b[/]" in content
        assert "\\x1b[7mtag" in tags
        await pilot.press("tab", "home", "ctrl+k", *"0.4")  # only the importance changes
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ReasonConfirmScreen), app.screen
        before = app.commits_settled
        await pilot.press("y")
        await settled(pilot, before)
    after = open_store(path).get("m1")
    assert after.importance == 0.4
    assert after.content == HOSTILE and after.tags == ("\x1b[7mtag",)


async def test_the_merge_editor_shows_escapes_and_merges_the_real_text(tmp_path: Path) -> None:
    path = _store(tmp_path)
    app = app_for(path)
    async with app.run_test(size=(120, 35)) as pilot:
        await ready(pilot)
        store = app.store
        assert store is not None
        members = [store.get("m1"), store.get("m2")]
        app.push_screen(MergeScreen(store, members, Service()))
        await pilot.pause()
        editor = app.screen.query_one("#editor", TextArea)
        _no_control(editor.text)
        assert "\\x1b[31mRED" in editor.text
        screen = app.screen
        assert isinstance(screen, MergeScreen)
        merged, _ = screen.preview()
        assert "\x1b[31mRED" in merged.content  # the entries' own text, not the escaped form
