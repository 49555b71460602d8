"""The longest UI-thread frame while typing in the merge editor on a 100,000-entry store, after
a commit replaced the store's records: the previous garbage-collection policy and now, side by
side, each in a fresh process.

    python bench/ui_frame_bench.py [--size 100000] [--chars 30] [--commits 1] [--touch N]

The app runs headless (`App.run_test()`); `--commits` commits, each giving every entry a new
importance (as applying a decay plan does), run through the app's commit flow; then two
entries of one user are opened in the merge editor and 30 characters typed, one key at a time.
Measured:

- frame: every callback the asyncio loop runs on the UI (main) thread is timed
  (`asyncio.Handle._run`, perf_counter): the longest is the longest stretch the UI thread was
  busy without a chance to paint or read a key. Only the typing phase counts (from the first
  key to the last preview), not opening the store or the screen.
- gc: each pass of the cyclic collector while typing (`gc.callbacks`), its generation; the
  objects it could walk (tracked, not frozen) when typing starts.
- a full pass now: `gc.collect()` timed once after the typing, what any full pass the collector
  starts on its own (every ~25 % growth of the old generation) costs the UI thread then.
- settle: the passes memtui now makes once a load or a commit is shown (`tui/heap.py`).

"before" is the previous policy: `gc.freeze()` once after the first load only, so what every
later load or commit builds (records, the ledger's images, the ids) is walked by each full pass.
"after" is this branch: a pass over what is not frozen, then a freeze, once each load and
commit is shown. Each runs in its own process (`--only before|after` runs one and prints its
figures as JSON), so neither inherits the other's garbage.

(The earlier comparison of this bench, ids indexed per preview and no debounce vs now, was:
longest frame 478 ms before, 163 ms after, on this machine.)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["TEXTUAL_ANIMATIONS"] = "none"

from bench.pairs_bench import NOW, make_store
from memtui.stores import Change
from memtui.stores.ledger import Transaction
from memtui.stores.protocol import MemoryStore
from memtui.tui import heap, make_app
from memtui.tui.app import MemtuiApp
from memtui.tui.screens.merge import MergeScreen

TEXT = "remember: prefers dark roast!!" * 10


class Frames:
    """Times every callback the loop runs on the main thread while `on` is set."""

    def __init__(self) -> None:
        self.on = False
        self.times: list[float] = []
        self.previews: list[float] = []
        self.longest = ""  # what the longest callback was
        self.gc_pauses: list[float] = []  # the cyclic collector's passes while typing
        self.gc_generations: list[int] = []
        self._gc_start = 0.0
        self.gc_total = 0.0
        self.without_gc: list[float] = []  # each callback's time less the gc passes in it

    def gc_event(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_start = time.perf_counter()
        elif self.on:
            took = time.perf_counter() - self._gc_start
            self.gc_pauses.append(took)
            self.gc_generations.append(info["generation"])
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
def previous_gc_policy() -> Iterator[None]:
    """`gc.freeze()` after the first load only; nothing after later loads and commits."""
    settle = heap.settle

    def nothing(*, everything: bool = False) -> None:
        pass

    heap.settle = nothing
    try:
        yield
    finally:
        heap.settle = settle


@contextmanager
def settle_timed(times: list[float]) -> Iterator[None]:
    settle = heap.settle

    def timed(*, everything: bool = False) -> None:
        start = time.perf_counter()
        settle(everything=everything)
        times.append(time.perf_counter() - start)

    heap.settle = timed
    try:
        yield
    finally:
        heap.settle = settle


async def commit_edits(app: MemtuiApp, pilot: Any, count: int, touch: int | None) -> None:
    """`count` commits through the app's commit flow, each waited for (and the ledger read
    again); each gives every entry (or the first `touch`) a new importance, as applying a
    decay plan does."""
    for n in range(count):

        def job(store: MemoryStore, n: int = n) -> Transaction:
            changes = [
                Change(m, m.with_(importance=round(m.importance * 0.9, 6) or 0.5 + n / 100))
                for m in store.memories()[:touch]
            ]
            return store.commit(changes, actor="plan", kind="plan", reason="decay", now=NOW)

        settled = app.commits_settled
        app.start_commit(job, lambda tx: "applied", False, "applying")
        while app.commits_settled == settled:
            await pilot.pause(0.05)
        await app.workers.wait_for_complete()
        await pilot.pause()


async def type_in_merge_editor(
    path: Path, chars: int, commits: int, touch: int | None
) -> dict[str, Any]:
    frames = Frames()
    settles: list[float] = []
    app = make_app(str(path), now=NOW, watch_interval=0)
    with frames.installed(), settle_timed(settles):  # (inside the previous policy: nothing)
        async with app.run_test(size=(160, 45)) as pilot:
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
            await commit_edits(app, pilot, commits, touch)
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
            walkable = len(gc.get_objects())
            frozen = gc.get_freeze_count()
            frames.on = True
            for ch in TEXT[:chars]:
                await pilot.press(ch if ch.isalnum() else _key_name(ch))
            await pilot.pause(MergeScreen.PREVIEW_DELAY + 0.2)  # the last, debounced preview
            await pilot.pause()
            frames.on = False
            await pilot.pause()  # (the pass below is not one of the frames)
            start = time.perf_counter()
            gc.collect()
            full_pass = time.perf_counter() - start
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
        "gc_full": frames.gc_generations.count(2),
        "walkable": walkable,
        "frozen": frozen,
        "settle_max_ms": max(settles, default=0.0) * 1000,
        "settles": len(settles),
        "full_pass_ms": full_pass * 1000,
    }


def _what(handle: asyncio.events.Handle) -> str:
    """The task (and the message pump it runs) a callback woke up, or the callback."""
    task = getattr(getattr(handle, "_callback", None), "__self__", None)
    if isinstance(task, asyncio.Task):
        return task.get_name() + " " + getattr(task.get_coro(), "__qualname__", "")
    return repr(handle)[:120]


def _key_name(ch: str) -> str:
    return {" ": "space", ":": "colon", "!": "exclamation_mark"}.get(ch, ch)


def one_variant(
    variant: str, path: Path, chars: int, commits: int, touch: int | None
) -> dict[str, Any]:
    if variant == "before":
        with previous_gc_policy():
            return asyncio.run(type_in_merge_editor(path, chars, commits, touch))
    return asyncio.run(type_in_merge_editor(path, chars, commits, touch))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--chars", type=int, default=30)
    parser.add_argument("--commits", type=int, default=1)
    parser.add_argument("--touch", type=int, help="entries each commit changes (default: all)")
    parser.add_argument("--only", choices=["before", "after"])
    parser.add_argument("--store", type=Path, help="(with --only) the store made by the parent")
    args = parser.parse_args()
    if args.only:
        result = one_variant(args.only, args.store, args.chars, args.commits, args.touch)
        print(json.dumps(result))
        return
    folder = Path(tempfile.mkdtemp(prefix="memtui-ui-frame-"))
    results: dict[str, dict[str, Any]] = {}
    try:
        t0 = time.perf_counter()
        path = make_store(folder, "store", args.size, 100)
        print(f"store: {args.size:,} entries, 100 users ({time.perf_counter() - t0:.1f} s to make)")
        for variant in ("before", "after"):
            copy = folder / f"{variant}.json"
            shutil.copyfile(path, copy)
            run = [sys.executable, __file__, "--only", variant, "--store", str(copy)]
            run += ["--chars", str(args.chars), "--commits", str(args.commits)]
            run += ["--touch", str(args.touch)] if args.touch else []
            out = subprocess.run(run, check=True, capture_output=True, text=True).stdout
            results[variant] = json.loads(out.strip().splitlines()[-1])
    finally:
        shutil.rmtree(folder)
    before, after = results["before"], results["after"]
    print(
        f"typing {args.chars} characters in the merge editor after {args.commits} commit(s) of "
        f"{args.touch or args.size:,} entries "
        "(UI thread, per callback; each variant in a fresh process):"
    )
    print(f"{'':32}{'before':>12}{'after':>12}")
    rows = [
        ("longest frame (ms)", "longest_ms", "{:.1f}"),
        ("longest, less gc (ms)", "no_gc_ms", "{:.1f}"),
        ("longest gc pass (ms)", "gc_max_ms", "{:.1f}"),
        ("full (gen-2) gc passes", "gc_full", "{}"),
        ("objects gc walks (not frozen)", "walkable", "{:,}"),
        ("objects frozen", "frozen", "{:,}"),
        ("a full gc pass now (ms)", "full_pass_ms", "{:.1f}"),
        ("memtui's own passes (settle)", "settles", "{}"),
        ("longest settle (ms)", "settle_max_ms", "{:.1f}"),
        ("previews run", "previews", "{}"),
        ("longest preview (ms)", "preview_max_ms", "{:.1f}"),
        ("frames timed", "frames", "{}"),
    ]
    for label, key, fmt in rows:
        print(f"{label:32}{fmt.format(before[key]):>12}{fmt.format(after[key]):>12}")
    print(f"longest callback before: {before['longest']}")
    print(f"longest callback after:  {after['longest']}")


if __name__ == "__main__":
    main()
