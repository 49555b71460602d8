"""The TUI side of "what the agent changed since you last looked": the line on open, the screen
(`g`) with each change's before and after, `r` restoring the marked ones as one transaction, and
the agent's events in the history screen (restored from there with `u`)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import OptionList, Static

from memtui.tui import make_app
from memtui.tui.app import MemtuiApp
from memtui.tui.modals import ConfirmScreen
from memtui.tui.screens.history import HistoryScreen
from memtui.tui.screens.outside import OutsideScreen
from tests.conftest import NOW, CliResult


def app_for(path: Path) -> MemtuiApp:
    return make_app(str(path), now=NOW, watch_interval=0)


async def ready(pilot: Pilot) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def settled(pilot: Pilot, before: int) -> None:
    """Until the commit started after `before` has ended."""
    while pilot.app.commits_settled <= before:  # type: ignore[attr-defined]
        await pilot.pause(0.02)
    await ready(pilot)


def _agent(path: Path) -> list[dict[str, Any]]:
    """The agent (pi's way): removes the first two entries and rewrites the third."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    original = [dict(m) for m in doc["memories"]]
    del doc["memories"][:2]
    doc["memories"][0]["content"] = "the agent's rewrite"
    tmp = path.with_name(path.name + ".agent")
    tmp.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)
    return original


def _notes(app: MemtuiApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_the_screen_lists_the_agents_changes_and_restores_the_marked_ones(
    fixture_copy: Callable[[str], Path], cli: Callable[..., CliResult]
) -> None:
    path = fixture_copy("example-store.json")
    cli("stats", path)  # memtui has seen the store once
    original = _agent(path)
    app = app_for(path)
    async with app.run_test(size=(130, 38)) as pilot:
        await ready(pilot)
        line = "since you last looked (2026-11-30 12:00): the agent added 0, changed 1, removed 2"
        assert any(line in n for n in _notes(app)), _notes(app)
        await pilot.press("g")
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, OutsideScreen)
        title = str(screen.query_one("#title", Static).render())
        assert line in title
        options = screen.query_one("#list", OptionList)
        rows = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert rows[0].startswith("  removed ") and original[0]["id"] in rows[0]
        assert any(r.startswith("  changed ") and original[2]["id"] in r for r in rows)
        detail = str(screen.query_one("#detail-body", Static).render())
        assert original[0]["content"] in detail
        # mark the two removed ones, restore them
        await pilot.press("space", "down", "space")
        before = app.commits_settled
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "Bring back 2 entries" in app.screen.body.plain
        await pilot.press("y")
        await settled(pilot, before)
        await pilot.pause()
        # the list stays, each restored change saying it is back
        rows = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert sum("brought back" in r for r in rows) == 2, rows
        assert not any("brought back" in r for r in rows if original[2]["id"] in r)
    back = json.loads(path.read_text(encoding="utf-8"))["memories"]
    assert back[:2] == original[:2]
    assert back[2]["content"] == "the agent's rewrite"
    history = cli("history", path)
    assert "user  restore" in history.out and "agent outside" in history.out
    # the TUI opened it: the person has looked
    assert "the agent changed nothing" in cli("stats", path).out


async def test_the_history_screen_shows_the_agents_event_and_u_restores_it(
    fixture_copy: Callable[[str], Path], cli: Callable[..., CliResult]
) -> None:
    path = fixture_copy("example-store.json")
    cli("stats", path)
    original = _agent(path)
    app = app_for(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press("h")
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        options = screen.query_one("#list", OptionList)
        first = str(options.get_option_at_index(0).prompt)
        assert first.startswith("a1") and "agent outside" in first
        before = app.commits_settled
        await pilot.press("u")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert "Bring back 3 entries" in app.screen.body.plain
        await pilot.press("y")
        await settled(pilot, before)
    assert json.loads(path.read_text(encoding="utf-8"))["memories"] == original
