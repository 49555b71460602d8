"""Regenerate screenshots/*.svg from the demo store, at a fixed size and clock.

python scripts/export_screenshots.py
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["TEXTUAL_ANIMATIONS"] = "none"

from textual.pilot import Pilot

from memtui.config import Settings
from memtui.demo import make_demo_memories
from memtui.model import Status
from memtui.stores import create_native_store
from memtui.tui import make_app
from memtui.tui.widgets.memory_table import MemoryTable

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
SIZE = (130, 38)
OUT = ROOT / "screenshots"

Steps = Callable[[Pilot], Awaitable[None]]


async def settle(pilot: Pilot) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def nothing(pilot: Pilot) -> None:
    return None


async def detail(pilot: Pilot) -> None:
    await pilot.press("down", "space", "space", "up", "up")


async def lineage(pilot: Pilot) -> None:
    app = pilot.app
    await pilot.press("full_stop")
    chained = next(m for m in app.model.memories if m.status is Status.SUPERSEDED and m.supersedes)
    app.query_one(MemoryTable).cursor = app.model.position_of(chained.id)
    await pilot.press("l")
    await settle(pilot)


async def help_screen(pilot: Pilot) -> None:
    await pilot.press("question_mark")


async def filtered(pilot: Pilot) -> None:
    await pilot.press("slash", *"coffee", "enter")


def _two_of_one_user(pilot: Pilot) -> None:
    app = pilot.app
    cluster = [m for m in app.model.memories if m.visible and "pnpm" in m.content]
    user = cluster[0].user_id
    app.model.marked = {m.id for m in cluster if m.user_id == user}


async def merge(pilot: Pilot) -> None:
    _two_of_one_user(pilot)
    await pilot.press("m")
    await pilot.pause(0.3)


async def plan(pilot: Pilot) -> None:
    await pilot.press("p")
    await settle(pilot)
    await pilot.press("down", "down", "down")
    await pilot.pause(0.3)


async def clusters(pilot: Pilot) -> None:
    await pilot.press("c")
    await settle(pilot)
    await pilot.press("minus", "minus")
    await settle(pilot)
    await pilot.pause(0.3)


async def decay(pilot: Pilot) -> None:
    await pilot.press("down", "down", "down", "d")
    await settle(pilot)
    await pilot.pause(0.3)


async def history(pilot: Pilot) -> None:
    _two_of_one_user(pilot)
    await pilot.press("m")
    await pilot.pause(0.3)
    await pilot.press("ctrl+s", "y")
    await settle(pilot)
    await pilot.press("h")
    await pilot.pause(0.3)


async def shoot(store: str, name: str, steps: Steps, theme: str = "memtui-dark") -> None:
    app = make_app(store, Settings(theme=theme), now=NOW, watch_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await steps(pilot)
        await pilot.pause()
        app.save_screenshot(f"{name}.svg", str(OUT))
    print(f"screenshots/{name}.svg")


async def main() -> None:
    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        create_native_store(
            Path("demo-store.json"),
            make_demo_memories(400, 7, NOW),
            now=NOW,
            kind="demo",
            reason="screenshots",
        )
        store = "demo-store.json"
        await shoot(store, "home", nothing)
        await shoot(store, "detail", detail)
        await shoot(store, "lineage", lineage)
        await shoot(store, "help", help_screen)
        await shoot(store, "filter", filtered)
        await shoot(store, "merge", merge)
        await shoot(store, "plan", plan)
        await shoot(store, "clusters", clusters)
        await shoot(store, "decay", decay)
        await shoot(store, "history", history)
        for theme in ("memtui-dark", "memtui-paper", "memtui-phosphor"):
            await shoot(store, f"theme-{theme}", nothing, theme)


if __name__ == "__main__":
    asyncio.run(main())
