"""TUI figures on a 100,000-entry native store, side by side with Textual's stock DataTable.

    python bench/tui_bench.py [--size 100000] [--paint-runs 5] [--before REF] [--paint-only]

1. Process start to the first painted rows, in a real pseudo-terminal (120×40): `memtui STORE`
   against bench/stock_table_app.py (the same rows in a stock DataTable), and against the code
   of `--before` (default: where HEAD left main) on its own copy of the store, taking turns
   (medians of `--paint-runs`).
2. Filter as you type: the work from each keystroke to the repainted table (headless, in
   process), against rebuilding a stock DataTable with the matching rows.
3. Page-down through the table: the work of each page (keystroke to repaint), max and median.

The work of a keystroke is the CPU time the (single-threaded) app spends on it, measured around
Pilot's press-and-settle; Pilot itself waits in between, so wall time would mostly measure its
sleeps. A key bound to nothing gives the floor (Pilot's own cost).
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import os
import pty
import select
import shutil
import statistics
import struct
import sys
import tempfile
import termios
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ["TEXTUAL_ANIMATIONS"] = "none"

from before_tree import branch_point, compile_tree, unpack
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from memtui.demo import make_demo_memories
from memtui.stores import create_native_store, open_store
from memtui.textsafe import one_line
from memtui.tui import make_app

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def first_paint(
    cmd: list[str], marker: bytes, timeout: float = 120.0, source: Path = ROOT
) -> float:
    """Seconds from process start until `marker` is written to the terminal (the code in
    `source`)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(source)  # `python -m` puts the working folder before PYTHONPATH
        os.environ["PYTHONPATH"] = str(source)
        os.environ.update(
            {
                "TERM": "xterm-256color",
                "MEMTUI_NOW": "2026-11-30T00:00:00Z",
                "TEXTUAL_ANIMATIONS": "none",
            }
        )
        os.execvp(cmd[0], cmd)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    start = time.perf_counter()
    seen = b""
    try:
        while time.perf_counter() - start < timeout:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                try:
                    seen += os.read(fd, 65536)
                except OSError:
                    break
                if marker in seen:
                    return time.perf_counter() - start
        return float("nan")
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)


class StockFilter(App[None]):
    """A stock DataTable refilled with the matching rows on every keystroke."""

    def __init__(self, rows: list[tuple[str, ...]]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        yield DataTable()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("content", "category", "id")
        table.add_rows(self.rows)

    def refill(self, query: str) -> None:
        table = self.query_one(DataTable)
        table.clear()
        table.add_rows(r for r in self.rows if query in r[0].lower())


async def work_of(pilot, key: str) -> float:  # type: ignore[no-untyped-def]
    start = time.process_time()
    await pilot.press(key)
    await pilot.pause()
    return time.process_time() - start


async def keystrokes(path: Path, text: str) -> tuple[list[float], list[float], list[float], float]:
    app = make_app(str(path), now=NOW, watch_interval=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause(0.3)
        floor = statistics.median([await work_of(pilot, "x") for _ in range(10)])
        await pilot.press("slash")
        filter_times = [await work_of(pilot, ch) for ch in text]
        await pilot.press("escape")
        await pilot.pause()
        page_times = [await work_of(pilot, "pagedown") for _ in range(300)]
    memories = open_store(path).memories()
    rows = [(one_line(m.content)[:60], m.category, m.id) for m in memories]
    stock = StockFilter(rows)
    stock_times = []
    async with stock.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        for n in range(1, min(len(text), 4) + 1):
            start = time.process_time()
            stock.refill(text[:n].lower())
            await pilot.pause()
            stock_times.append(time.process_time() - start)
    return filter_times, page_times, stock_times, floor


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--paint-runs", type=int, default=5)
    parser.add_argument("--before", help="the git ref to compare with (default: the branch point)")
    parser.add_argument("--paint-only", action="store_true", help="only the first paint")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="memtui-tui-"))
    try:
        store = folder / "store.json"
        memories = make_demo_memories(args.size, 3, NOW)
        create_native_store(store, memories, now=NOW, kind="import", reason="bench")
        print(f"store: {args.size:,} entries, {store.stat().st_size / 1e6:.1f} MB (native)\n")
        before_ref = args.before or branch_point()
        before = unpack(before_ref, folder / "before")
        compile_tree(ROOT)
        theirs_store = folder / "before-store.json"
        shutil.copyfile(store, theirs_store)  # each its own sidecar (the outside record)
        os.environ["MEMTUI_DATA"] = str(folder / "data")
        print(
            f"1. process start to the first painted rows (pty, 120×40; median of "
            f"{args.paint_runs}, taking turns; before is {before_ref})"
        )
        times: dict[str, list[float]] = {"memtui": [], "before": [], "stock": []}
        for _ in range(args.paint_runs):
            for name, cmd, source in (
                ("memtui", [sys.executable, "-m", "memtui", str(store)], ROOT),
                ("before", [sys.executable, "-m", "memtui", str(theirs_store)], before),
                (
                    "stock",
                    [sys.executable, str(ROOT / "bench" / "stock_table_app.py"), str(store)],
                    ROOT,
                ),
            ):
                times[name].append(first_paint(cmd, b"importance", source=source))
        ours, was, theirs = (statistics.median(times[k]) for k in ("memtui", "before", "stock"))
        print(
            f"   memtui {ours:6.2f}s   before {was:6.2f}s   stock DataTable {theirs:6.2f}s   "
            f"({theirs / ours:.1f}× faster than the stock table)\n"
        )
        if args.paint_only:
            return
        typed = "i love"
        filter_times, page_times, stock_times, floor = asyncio.run(keystrokes(store, typed))
        print(
            f"2. filter as you type {typed!r} over {args.size:,} entries (work per keystroke, "
            f"ms; a no-op key costs {floor * 1000:.1f})"
        )
        print("   memtui         " + "  ".join(f"{t * 1000:5.1f}" for t in filter_times))
        print(
            "   stock refill   "
            + "  ".join(f"{t * 1000:5.0f}" for t in stock_times)
            + f"  (first {len(stock_times)} keystrokes)\n"
        )
        median = statistics.median(page_times) * 1000
        worst = ", ".join(f"{t * 1000:.0f}" for t in sorted(page_times)[-5:])
        print(
            f"3. page-down ×{len(page_times)}: median {median:.1f} ms of work per page; "
            f"the five slowest {worst} ms"
        )
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
