"""Keys that arrive in one burst (a paste, a fast typist on a busy machine, tmux send-keys):
the whole burst reaches memtui as one read of the terminal, before memtui has handled its first
key, so the screen a key lands on may not be the screen it was typed at. No burst of printable
keys may ever write to the store (issue 22, found in tmux under load)."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest
from textual import events
from textual.keys import _character_to_key, _get_unicode_name_from_key
from textual.pilot import Pilot

from memtui.tui.screens import Question
from tests.test_tui_keys import app_for, demo, notices, ready, transactions  # noqa: F401

os.environ["TEXTUAL_ANIMATIONS"] = "none"

# the issue's walk, typed without waiting for a single screen to open
WALK = ["slash", *"board games", "enter", "home", "space", "space", "m", *"buy yes now undo"]


def key_event(key: str) -> events.Key:
    if len(key) == 1 and not key.isalnum():
        key = _character_to_key(key)
    try:
        char: str | None = unicodedata.lookup(_get_unicode_name_from_key(key))
    except KeyError:
        char = key if len(key) == 1 else None
    return events.Key(key, char)


async def burst(pilot: Pilot, keys: list[str]) -> None:
    """Every key as one read of the terminal: all queued before the first is handled, read
    within the same millisecond (as the driver stamps them)."""
    driver = pilot.app._driver
    assert driver is not None
    for key in keys:
        driver.send_message(key_event(key))
    await ready(pilot)


@pytest.mark.parametrize("settle", [0.0, 0.5])
async def test_a_burst_of_the_issues_walk_never_writes(
    demo: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    settle: float,
) -> None:
    monkeypatch.setattr(Question, "settle", settle)
    before = transactions(demo)
    app = app_for(demo)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await burst(pilot, WALK)
        await pilot.pause(0.1)
        await ready(pilot)
        assert not any("Undo done" in n for n in notices(app)), notices(app)
    assert transactions(demo) == before
