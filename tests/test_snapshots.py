"""Snapshots of the main screens at a fixed size and clock, animations off
(`pytest --snapshot-update` accepts new ones after a look at snapshot_report.html)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.pilot import Pilot

from memtui.config import Settings
from memtui.demo import make_demo_memories
from memtui.model import Status
from memtui.stores import create_native_store
from memtui.tui import make_app
from memtui.tui.memory_table import MemoryTable
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


def test_home(demo: str, snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(
        make_app(demo, now=NOW, watch_interval=0), terminal_size=SIZE, run_before=settle
    )


def test_detail_of_a_marked_entry(demo: str, snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        await pilot.press("down", "down", "space", "up")
        await pilot.pause()

    assert snap_compare(
        make_app(demo, now=NOW, watch_interval=0), terminal_size=SIZE, run_before=run_before
    )


def test_lineage(demo: str, snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot) -> None:
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

    assert snap_compare(
        make_app(demo, now=NOW, watch_interval=0), terminal_size=SIZE, run_before=run_before
    )


def test_help(demo: str, snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(
        make_app(demo, now=NOW, watch_interval=0),
        terminal_size=SIZE,
        press=["question_mark"],
        run_before=settle,
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


async def _open(pilot: Pilot, key: str) -> None:
    await settle(pilot)
    await pilot.press(key)
    await settle(pilot)
    await pilot.pause(0.2)


def test_merge_screen(demo: str, snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        app = pilot.app
        user = app.model.memory_at(0).user_id  # type: ignore[attr-defined,union-attr]
        same = [m.id for m in app.model.memories if m.user_id == user and m.visible][:2]  # type: ignore[attr-defined]
        app.model.marked = set(same)  # type: ignore[attr-defined]
        await pilot.press("m")
        await pilot.pause(0.2)

    assert snap_compare(
        make_app(demo, now=NOW, watch_interval=0), terminal_size=SIZE, run_before=run_before
    )


def test_plan_review(demo: str, snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot) -> None:
        await _open(pilot, "p")
        await pilot.press("down", "down", "down")
        await pilot.pause(0.2)

    assert snap_compare(
        make_app(demo, now=NOW, watch_interval=0), terminal_size=SIZE, run_before=run_before
    )


def test_clusters(demo: str, snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot) -> None:
        await _open(pilot, "c")
        await pilot.press("minus", "minus", "minus")
        await settle(pilot)
        await pilot.pause(0.2)

    assert snap_compare(
        make_app(demo, now=NOW, watch_interval=0), terminal_size=SIZE, run_before=run_before
    )


def test_decay(demo: str, snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot) -> None:
        await _open(pilot, "d")

    assert snap_compare(
        make_app(demo, now=NOW, watch_interval=0), terminal_size=SIZE, run_before=run_before
    )


def test_history(demo: str, snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        app = pilot.app
        user = app.model.memory_at(0).user_id  # type: ignore[attr-defined,union-attr]
        same = [m.id for m in app.model.memories if m.user_id == user and m.visible][:2]  # type: ignore[attr-defined]
        app.model.marked = set(same)  # type: ignore[attr-defined]
        await pilot.press("m")
        await pilot.pause(0.2)
        await pilot.press("ctrl+s", "y")
        await settle(pilot)
        await pilot.press("h")
        await pilot.pause(0.3)

    assert snap_compare(
        make_app(demo, now=NOW, watch_interval=0), terminal_size=SIZE, run_before=run_before
    )


SMALL = (80, 24)


def test_home_80x24(demo: str, snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(
        make_app(demo, now=NOW, watch_interval=0), terminal_size=SMALL, run_before=settle
    )


def test_help_80x24(demo: str, snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(
        make_app(demo, now=NOW, watch_interval=0),
        terminal_size=SMALL,
        press=["question_mark"],
        run_before=settle,
    )


def test_plan_review_80x24(demo: str, snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot) -> None:
        await _open(pilot, "p")
        await pilot.press("down", "down")
        await pilot.pause(0.2)

    assert snap_compare(
        make_app(demo, now=NOW, watch_interval=0), terminal_size=SMALL, run_before=run_before
    )
