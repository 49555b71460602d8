"""Planning inside the app keeps the UI responsive: while the plan worker runs on a 20,000-entry
store, how late does the UI thread serve a 10 ms heartbeat (the longest frame it could not
draw), against the same heartbeat with the app idle?

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
from memtui.tui.plan_screen import PlanScreen

NOW = datetime(2026, 11, 30, tzinfo=UTC)


class Heartbeat:
    def __init__(self) -> None:
        self.gaps: list[float] = []
        self.last = time.perf_counter()

    def tick(self) -> None:
        now = time.perf_counter()
        self.gaps.append(now - self.last)
        self.last = now


async def measure(store: Path, profile: str) -> tuple[float, float, float, int]:
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
        start = time.perf_counter()
        await pilot.press("p")
        screen = app.screen
        assert isinstance(screen, PlanScreen)
        while screen.plan is None:
            await asyncio.sleep(0.05)
        seconds = time.perf_counter() - start
        timer.stop()
        return max(idle.gaps[1:]), max(busy.gaps[1:]), seconds, len(screen.plan.actions)


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
        idle, busy, seconds, actions = asyncio.run(measure(store, args.profile))
        print(
            f"{args.size:,} entries of one user, profile {args.profile}: planned {actions:,} "
            f"actions in {seconds:.1f}s inside the app"
        )
        print(
            f"longest UI frame (10 ms heartbeat): idle {idle * 1000:.0f} ms, "
            f"while planning {busy * 1000:.0f} ms"
        )
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
