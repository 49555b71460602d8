"""Snapshots of every screen at 80x24 and 160x45 (and the themes), at a fixed clock, animations off
(`pytest --snapshot-update` accepts new ones after a look at snapshot_report.html)."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from memtui.config import Settings
from memtui.demo import make_demo_memories
from memtui.model import Status
from memtui.service import Service
from memtui.stores import create_native_store
from memtui.tui import make_app
from memtui.tui.widgets.memory_table import MemoryTable
from tests.conftest import NOW

os.environ["TEXTUAL_ANIMATIONS"] = "none"
SIZE = (120, 34)


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)
    create_native_store(
        Path("demo.json"), make_demo_memories(120, 5, NOW), now=NOW, kind="demo", reason="snapshot"
    )
    return "demo.json"


async def settle(pilot: Pilot) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


# -- every screen at 80x24 and 160x45 ----------------------------------------------------------

SIZES = {"80x24": (80, 24), "160x45": (160, 45)}


def _mark_two_of_one_user(pilot: Pilot) -> None:
    app = pilot.app
    user = app.model.memory_at(0).user_id  # type: ignore[attr-defined,union-attr]
    same = [m.id for m in app.model.memories if m.user_id == user and m.visible][:2]  # type: ignore[attr-defined]
    app.model.marked = set(same)  # type: ignore[attr-defined]


async def _open(pilot: Pilot, key: str) -> None:
    await settle(pilot)
    await pilot.press(key)
    await settle(pilot)
    await pilot.pause(0.2)


async def home(pilot: Pilot) -> None:
    await settle(pilot)


async def detail(pilot: Pilot) -> None:
    await settle(pilot)
    await pilot.press("down", "down", "space", "up")
    if pilot.app.size.width < 100:
        await pilot.press("v")  # the pane is hidden at first on a narrow terminal
    await pilot.pause(0.3)


async def help_screen(pilot: Pilot) -> None:
    await _open(pilot, "question_mark")


async def quick_filters(pilot: Pilot) -> None:
    await _open(pilot, "f")


async def plan_review(pilot: Pilot) -> None:
    await _open(pilot, "p")
    await pilot.press("down", "down", "down")
    await pilot.pause(0.2)


async def clusters(pilot: Pilot) -> None:
    await _open(pilot, "c")
    await pilot.press("minus", "minus", "minus")
    await settle(pilot)
    await pilot.pause(0.2)


async def merge(pilot: Pilot) -> None:
    await settle(pilot)
    _mark_two_of_one_user(pilot)
    await pilot.press("m")
    await pilot.pause(0.2)
    for _ in range(200):  # the preview follows the text after a quiet moment (a timer)
        if getattr(pilot.app.screen, "_preview_timer", None) is None:
            break
        await pilot.pause(0.05)
    await settle(pilot)


async def decay(pilot: Pilot) -> None:
    await _open(pilot, "d")


async def history(pilot: Pilot) -> None:
    await merge(pilot)
    await pilot.press("ctrl+s", "y")
    await settle(pilot)
    await pilot.pause(0.3)
    await pilot.press("h")
    await settle(pilot)  # the ledger is read in a worker
    await pilot.pause(0.3)


async def lineage(pilot: Pilot) -> None:
    await settle(pilot)
    app = pilot.app
    await pilot.press("full_stop")
    chained = next(
        m
        for m in app.model.memories  # type: ignore[attr-defined]
        if m.status is Status.SUPERSEDED and m.supersedes
    )
    app.query_one(MemoryTable).cursor = app.model.position_of(chained.id)  # type: ignore[attr-defined]
    await pilot.press("l")
    await settle(pilot)


async def edit_form(pilot: Pilot) -> None:
    await _open(pilot, "e")
    for field in pilot.app.screen.query("TextArea, Input"):
        field.cursor_blink = False  # type: ignore[attr-defined]
    await pilot.pause()


async def label(pilot: Pilot) -> None:
    await _open(pilot, "L")
    await pilot.press("y", "n")  # two labels: the counts move on
    await pilot.pause(0.2)


async def calibration(pilot: Pilot) -> None:
    service = Service(clock=lambda: NOW)
    store = service.stores.open("demo.json")
    pairs, _, _ = service.profiles.pairs(store, "memtui", 0.05)
    for n, pair in enumerate(pairs[:40]):  # the 12 closest labelled the same memory
        service.labels.label(store, [pair.a, pair.b], same=n < 12)
    await _open(pilot, "L")
    await pilot.press("c")
    await settle(pilot)
    await pilot.pause(0.2)


async def new_entry(pilot: Pilot) -> None:
    await _open(pilot, "n")
    for field in pilot.app.screen.query("TextArea, Input"):
        field.cursor_blink = False  # type: ignore[attr-defined]
    await pilot.pause()


async def question(pilot: Pilot) -> None:
    await _open(pilot, "x")  # delete asks, with an optional reason


async def outside(pilot: Pilot) -> None:
    await _open(pilot, "g")  # the agent's changes (none yet: what the screen says then)


SCREENS: dict[str, Callable[[Pilot], Awaitable[None]]] = {
    "home": home,
    "detail": detail,
    "help": help_screen,
    "filter": quick_filters,
    "plan-review": plan_review,
    "clusters": clusters,
    "merge": merge,
    "decay": decay,
    "history": history,
    "lineage": lineage,
    "edit-form": edit_form,
    "label": label,
    "calibration": calibration,
    "new-entry": new_entry,
    "question": question,
    "outside": outside,
}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("screen", SCREENS)
def test_screen(screen: str, size: str, demo: str, snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot) -> None:
        await SCREENS[screen](pilot)
        pilot.app.clear_notifications()  # they time out: a busy machine would change the picture
        await pilot.pause()

    assert snap_compare(
        make_app(demo, now=NOW, watch_interval=0), terminal_size=SIZES[size], run_before=run_before
    )


def test_small_terminal_with_filter(demo: str, snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(
        make_app(demo, now=NOW, watch_interval=0),
        terminal_size=(80, 24),
        press=["slash", "l", "o", "v", "e"],
        run_before=settle,
    )


@pytest.mark.parametrize("theme", ["memtui-dark", "memtui-paper", "memtui-phosphor"])
def test_theme(theme: str, demo: str, snap_compare) -> None:  # type: ignore[no-untyped-def]
    app = make_app(demo, Settings(theme=theme), now=NOW, watch_interval=0)
    assert snap_compare(app, terminal_size=SIZE, run_before=settle)
