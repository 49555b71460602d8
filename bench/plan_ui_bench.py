"""Planning inside the app keeps the UI responsive: while the plan worker runs on a 20,000-entry
store, how late does the UI thread serve a 10 ms heartbeat (the longest frame it could not
draw), against the same heartbeat with the app idle? Reported apart: opening the plan screen
(its first 300 ms) and showing the finished plan, which are UI work of their own.

    python bench/plan_ui_bench.py [--size 20000] [--profile default]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ["TEXTUAL_ANIMATIONS"] = "none"

from memtui.demo import make_demo_memories
from memtui.stores import create_native_store
from memtui.tui import make_app
from memtui.tui.screens.plan import PlanScreen

NOW = datetime(2026, 11, 30, tzinfo=UTC)


class Heartbeat:
    def __init__(self) -> None:
        self.ticks: list[float] = [time.perf_counter()]

    def tick(self) -> None:
        self.ticks.append(time.perf_counter())

    def longest(self, start: float = 0.0, end: float = float("inf")) -> float:
        """The longest gap between beats that ended within [start, end]."""
        gaps = [
            b - a for a, b in zip(self.ticks, self.ticks[1:], strict=False) if start <= b <= end
        ]
        return max(gaps, default=0.0)


async def measure(store: Path, profile: str) -> tuple[float, float, float, float, float, int]:
    app = make_app(str(store), now=NOW, watch_interval=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause(0.5)
        idle = Heartbeat()
        timer = app.set_interval(0.01, idle.tick)
        await asyncio.sleep(2.0)
        timer.stop()
        busy = Heartbeat()
        timer = app.set_interval(0.01, busy.tick)
        shown: list[float] = []
        original = PlanScreen.show_plan

        def show_plan(screen: PlanScreen, plan: object) -> None:
            shown.append(time.perf_counter())
            original(screen, plan)  # type: ignore[arg-type]

        PlanScreen.show_plan = show_plan  # type: ignore[method-assign]
        start = time.perf_counter()
        await pilot.press("p")
        screen = app.screen
        assert isinstance(screen, PlanScreen)
        while screen.plan is None:
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
        timer.stop()
        ready = shown[0]
        opening = busy.longest(start, start + 0.3)
        working = busy.longest(start + 0.3, ready)
        showing = busy.longest(ready, ready + 1.0)
        seconds = ready - start
        return idle.longest(), opening, working, showing, seconds, len(screen.plan.actions)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=20_000)
    parser.add_argument("--profile", default="default")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="memtui-planui-"))
    try:
        store = folder / "store.json"
        memories = [m.with_(user_id="solo") for m in make_demo_memories(args.size, 5, NOW)]
        create_native_store(store, memories, now=NOW, kind="import", reason="bench")
        idle, opening, working, showing, seconds, actions = asyncio.run(
            measure(store, args.profile)
        )
        print(
            f"{args.size:,} entries of one user, profile {args.profile}: planned {actions:,} "
            f"actions in {seconds:.1f}s inside the app"
        )
        print("longest UI frame (10 ms heartbeat):")
        print(f"  idle app                      {idle * 1000:5.0f} ms")
        print(f"  while the plan worker runs    {working * 1000:5.0f} ms")
        print(f"  opening the plan screen       {opening * 1000:5.0f} ms")
        print(f"  showing the finished plan     {showing * 1000:5.0f} ms")
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
