"""The longest UI-thread frame while typing in the merge editor on a 100,000-entry store, the
previous way and now, side by side in one run.

    python bench/ui_frame_bench.py [--size 100000] [--chars 30]

The app runs headless (`App.run_test()`); two entries of one user are opened in the merge
editor and 30 characters typed, one key at a time. Measured:

- frame: every callback the asyncio loop runs on the UI (main) thread is timed
  (`asyncio.Handle._run`, perf_counter): the longest is the longest stretch the UI thread was
  busy without a chance to paint or read a key. Only the typing phase counts (from the first
  key to the last preview), not opening the store or the screen.
- preview: the time of each merge preview (`MergeScreen.refresh_preview`), and how many ran.

"before" is the previous implementation: the store's ids indexed again on every preview (the
old `IdMaker` over every id) and a preview on every keystroke (no debounce). "after" is this
branch: ids indexed once per store version (`Service.taken_ids`, warmed in a worker) and the
preview debounced (`MergeScreen.PREVIEW_DELAY`).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["TEXTUAL_ANIMATIONS"] = "none"

from bench.pairs_bench import NOW, make_store
from memtui.engine.ids import TakenIds
from memtui.service import Service, Store
from memtui.tui import make_app
from memtui.tui.merge_screen import MergeScreen

TEXT = "remember: prefers dark roast!!" * 10


class Frames:
    """Times every callback the loop runs on the main thread while `on` is set."""

    def __init__(self) -> None:
        self.on = False
        self.times: list[float] = []
        self.previews: list[float] = []
        self.longest = ""  # what the longest callback was
        self.gc_pauses: list[float] = []  # the cyclic collector's passes while typing
        self._gc_start = 0.0
        self.gc_total = 0.0
        self.without_gc: list[float] = []  # each callback's time less the gc passes in it

    def gc_event(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_start = time.perf_counter()
        elif self.on:
            took = time.perf_counter() - self._gc_start
            self.gc_pauses.append(took)
            self.gc_total += took

    @contextmanager
    def installed(self) -> Iterator[None]:
        original_run = asyncio.events.Handle._run
        original_preview = MergeScreen.refresh_preview
        main = threading.main_thread()
        frames = self

        def timed_run(handle: asyncio.events.Handle) -> None:
            if not frames.on or threading.current_thread() is not main:
                original_run(handle)
                return
            start, gc_before = time.perf_counter(), frames.gc_total
            try:
                original_run(handle)
            finally:
                took = time.perf_counter() - start
                frames.without_gc.append(took - (frames.gc_total - gc_before))
                frames.times.append(took)
                if took >= max(frames.times):
                    frames.longest = _what(handle)

        def timed_preview(screen: MergeScreen) -> None:
            start = time.perf_counter()
            try:
                original_preview(screen)
            finally:
                if frames.on:
                    frames.previews.append(time.perf_counter() - start)

        asyncio.events.Handle._run = timed_run  # type: ignore[method-assign]
        gc.callbacks.append(self.gc_event)
        MergeScreen.refresh_preview = timed_preview  # type: ignore[method-assign]
        try:
            yield
        finally:
            asyncio.events.Handle._run = original_run  # type: ignore[method-assign]
            gc.callbacks.remove(self.gc_event)
            MergeScreen.refresh_preview = original_preview  # type: ignore[method-assign]


@contextmanager
def previous_way() -> Iterator[None]:
    """The ids indexed on every preview and no debounce, as before this branch."""
    original_ids: Callable[[Service, Store], TakenIds] = Service.taken_ids
    delay = MergeScreen.PREVIEW_DELAY

    def every_time(self: Service, store: Store) -> TakenIds:
        return TakenIds.of(m.id for m in store.memories())

    Service.taken_ids = every_time  # type: ignore[method-assign]
    MergeScreen.PREVIEW_DELAY = 0
    try:
        yield
    finally:
        Service.taken_ids = original_ids  # type: ignore[method-assign]
        MergeScreen.PREVIEW_DELAY = delay


async def type_in_merge_editor(path: Path, chars: int) -> dict[str, Any]:
    frames = Frames()
    app = make_app(str(path), now=NOW, watch_interval=0)
    with frames.installed():
        async with app.run_test(size=(160, 45)) as pilot:
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
            store = app.store
            assert store is not None, "the store did not open"
            user = store.memories()[0].user_id
            members = [m for m in store.memories() if m.user_id == user and m.visible][:2]
            app.open_merge(members)
            await pilot.pause()
            assert isinstance(app.screen, MergeScreen)
            await pilot.click("#editor")
            await pilot.press("end")
            await pilot.pause()
            frames.on = True
            for ch in TEXT[:chars]:
                await pilot.press(ch if ch.isalnum() else _key_name(ch))
            await pilot.pause(MergeScreen.PREVIEW_DELAY + 0.2)  # the last, debounced preview
            await pilot.pause()
            frames.on = False
            typed = app.screen.own_text or ""
            assert TEXT[:chars] in typed, f"the keys did not reach the editor: {typed!r}"
            result_shown = str(app.screen.query_one("#result-body").render())
            assert "merged entry" in result_shown.lower()
            await pilot.press("escape")
            await pilot.pause()
    return {
        "frames": len(frames.times),
        "longest_ms": max(frames.times, default=0.0) * 1000,
        "previews": len(frames.previews),
        "preview_max_ms": max(frames.previews, default=0.0) * 1000,
        "longest": frames.longest,
        "no_gc_ms": max(frames.without_gc, default=0.0) * 1000,
        "gc_max_ms": max(frames.gc_pauses, default=0.0) * 1000,
    }


def _what(handle: asyncio.events.Handle) -> str:
    """The task (and the message pump it runs) a callback woke up, or the callback."""
    task = getattr(getattr(handle, "_callback", None), "__self__", None)
    if isinstance(task, asyncio.Task):
        return task.get_name() + " " + getattr(task.get_coro(), "__qualname__", "")
    return repr(handle)[:120]


def _key_name(ch: str) -> str:
    return {" ": "space", ":": "colon", "!": "exclamation_mark"}.get(ch, ch)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--chars", type=int, default=30)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="memtui-ui-frame-"))
    try:
        t0 = time.perf_counter()
        path = make_store(folder, "store", args.size, 100)
        print(f"store: {args.size:,} entries, 100 users ({time.perf_counter() - t0:.1f} s to make)")
        with previous_way():
            before = asyncio.run(type_in_merge_editor(path, args.chars))
        after = asyncio.run(type_in_merge_editor(path, args.chars))
    finally:
        shutil.rmtree(folder)
    print(f"typing {args.chars} characters in the merge editor (UI thread, per callback):")
    print(f"{'':24}{'before':>12}{'after':>12}")
    rows = [
        ("longest frame (ms)", "longest_ms", "{:.1f}"),
        ("longest, less gc (ms)", "no_gc_ms", "{:.1f}"),
        ("previews run", "previews", "{}"),
        ("longest preview (ms)", "preview_max_ms", "{:.1f}"),
        ("frames timed", "frames", "{}"),
        ("longest gc pass (ms)", "gc_max_ms", "{:.1f}"),
    ]
    for label, key, fmt in rows:
        print(f"{label:24}{fmt.format(before[key]):>12}{fmt.format(after[key]):>12}")
    print(f"longest callback before: {before['longest']}")
    print(f"longest callback after:  {after['longest']}")


if __name__ == "__main__":
    main()
