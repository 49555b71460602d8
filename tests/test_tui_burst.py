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
from textual.widgets import Input

from memtui.tui.app import MemtuiApp
from memtui.tui.key_guard import BURST
from memtui.tui.modals import SETTLE, ConfirmScreen, Question, ReasonConfirmScreen
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


@pytest.mark.parametrize("split", [0, 14, 18, 29])
async def test_the_issues_walk_typed_in_bursts_never_writes(
    demo: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    split: int,
) -> None:
    """The walk in two bursts, the second starting after `split` keys (0: one burst). After
    "home" (14) the second burst used to undo transaction 2: its `u` opened the Undo question
    and its `y`, routed to the table before the question existed, answered it."""
    monkeypatch.setattr(Question, "settle", SETTLE)
    monkeypatch.setattr(MemtuiApp, "burst", BURST)
    before = transactions(demo)
    app = app_for(demo)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await burst(pilot, WALK[:split])
        await burst(pilot, WALK[split:])
        await pilot.pause(SETTLE + 0.1)  # long enough for any question to arm
        await ready(pilot)
        assert not any("Undo done" in n for n in notices(app)), notices(app)
    assert transactions(demo) == before


async def test_a_key_typed_before_a_question_opened_never_answers_it(
    demo: Path,  # noqa: F811
) -> None:
    """`u` then `y` in one burst, with no settling time and no burst rule (conftest): the `y`
    was routed to the table before the question existed, so it does not answer it."""
    before = transactions(demo)
    app = app_for(demo)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await burst(pilot, ["u", "y"])
        assert isinstance(app.screen, ConfirmScreen)  # asked, not answered
        await pilot.press("y")  # typed at the question: answers it
        await ready(pilot)
        assert not isinstance(app.screen, ConfirmScreen)
    assert transactions(demo) == before + 1


async def test_a_writing_key_in_a_burst_asks_nothing_and_the_same_key_alone_asks(
    demo: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(MemtuiApp, "burst", BURST)
    app = app_for(demo)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await burst(pilot, ["j", "x"])  # delete, right after another key: a burst
        assert not isinstance(app.screen, ReasonConfirmScreen)
        assert any("came in a burst of keys" in n for n in notices(app))
        await pilot.pause(BURST * 2)
        await pilot.press("x")  # on its own
        await ready(pilot)
        assert isinstance(app.screen, ReasonConfirmScreen)


async def armed(pilot: Pilot, screen: Question[object]) -> None:
    for _ in range(500):
        if screen.armed:
            return
        await pilot.pause(0.01)
    raise AssertionError("the question never armed")


async def focused_on(pilot: Pilot, widget: object) -> None:
    for _ in range(500):
        if pilot.app.focused is widget:
            return
        await pilot.pause(0.01)
    raise AssertionError(f"focus never reached {widget}")


async def test_a_word_typed_at_a_question_that_waited_never_answers_it(
    demo: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ "yes" (or " yes") typed in one burst at a question that has been quiet: its first key
    came after the pause, but the rest of the word followed within `BURST`, so it was the
    start of a word, not an answer; a `y` on its own answers."""
    monkeypatch.setattr(Question, "settle", 0.05)
    monkeypatch.setattr(MemtuiApp, "burst", BURST)
    before = transactions(demo)
    app = app_for(demo)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await pilot.press("u")
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, ConfirmScreen)
        for word in ("yes", " yes", "y n"):
            await armed(pilot, screen)
            await burst(pilot, ["space" if c == " " else c for c in word])
            await pilot.pause(BURST * 3)
            assert app.screen is screen, word
        await armed(pilot, screen)
        await pilot.press("y")
        for _ in range(100):
            await pilot.pause(0.02)
            if transactions(demo) > before:
                break
    assert transactions(demo) == before + 1


async def test_a_reason_typed_at_a_persons_pace_is_all_kept(
    demo: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In a question's reason box every key types (the box cannot answer), however close
    together the keys come; the answer still waits for quiet."""
    monkeypatch.setattr(Question, "settle", 0.05)
    monkeypatch.setattr(MemtuiApp, "burst", BURST)
    before = transactions(demo)
    app = app_for(demo)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await pilot.press("x")
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, ReasonConfirmScreen)
        await armed(pilot, screen)
        await pilot.press("r")  # held until no key follows it within `burst`, then delivered
        await focused_on(pilot, screen.query_one("#reason", Input))
        await burst(pilot, list("yes, a duplicate"))
        assert screen.query_one("#reason", Input).value == "yes, a duplicate"
        await pilot.press("enter")  # ends the reason: focus on Yes
        await ready(pilot)
        assert app.screen is screen
        await pilot.pause(0.1)
        await pilot.press("enter")  # after a pause: on Yes, answers
        for _ in range(100):
            await pilot.pause(0.02)
            if transactions(demo) > before:
                break
    assert transactions(demo) == before + 1
