"""Store figures at 100k entries, side by side with a baseline measured in the same run.

    python bench/store_bench.py [--size 100000] [--stats-runs 5] [--before REF]

- stats: `memtui stats STORE` as a whole process (start-up included) on each store, against
  a process that only `json.load`s the same file, and against the code of `--before` (default:
  where HEAD left main) on its own copy of the store; the runs take turns, medians shown.
- load: memtui's `Store.open` (parse + validate + build Memory records) for a native, a pi and
  a longterm file, against a bare `json.load` of the same file (stdlib) and TinyDB opening the
  native file and reading its table.
- commit: one transaction touching 1,000 entries (backup and ledger included), against TinyDB's
  own `Table.update` of single documents (one whole-file rewrite per call).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from before_tree import ROOT, branch_point, compile_tree, environment, unpack
from before_tree import run as run_process
from tinydb import TinyDB

from memtui.demo import make_demo_memories
from memtui.stores import Change, create_native_store, export_store, open_store

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def best_of(runs: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--touch", type=int, default=1000)
    parser.add_argument("--stats-runs", type=int, default=5, help="0: no whole-process runs")
    parser.add_argument("--before", help="the git ref to compare with (default: the branch point)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="memtui-bench-"))
    try:
        run(folder, args.size, args.touch, args.stats_runs, args.before or branch_point())
    finally:
        shutil.rmtree(folder)


_JSON_LOAD = (
    "import json, sys; p = sys.argv[1]; f = open(p, 'rb');"
    "[json.loads(x) for x in f] if p.endswith('.jsonl') else json.load(f)"
)


def whole_process_stats(folder: Path, stores: list[Path], runs: int, before_ref: str) -> None:
    """`memtui stats` (start-up, open, counts, the outside-change look) as a whole process."""
    before = unpack(before_ref, folder / "before")
    compile_tree(ROOT)
    env = environment(folder / "data")
    print(f"stats, whole process (median of {runs}, taking turns; before is {before_ref})")
    print(f"  {'store':<16}{'json.load':>11}{'before':>17}{'after':>17}")
    for path in stores:
        copies = {}
        for side in ("before", "after"):
            copies[side] = folder / side / "stores" / path.name
            copies[side].parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copies[side])
        sources = {"before": before, "after": ROOT}
        for side in ("before", "after"):  # memtui's first look at a store records it
            run_process(memtui_stats(copies[side]), sources[side], env)
        times: dict[str, list[float]] = {"json": [], "before": [], "after": []}
        peaks: dict[str, float] = {"json": 0.0, "before": 0.0, "after": 0.0}
        for _ in range(runs):
            for side, cmd, source in (
                ("json", [sys.executable, "-c", _JSON_LOAD, str(path)], ROOT),
                ("before", memtui_stats(copies["before"]), before),
                ("after", memtui_stats(copies["after"]), ROOT),
            ):
                wall, peak = run_process(cmd, source, env)
                times[side].append(wall)
                peaks[side] = max(peaks[side], peak)
        base = statistics.median(times["json"])
        cells = [f"{base:>9.2f}s"]
        for side in ("before", "after"):
            t = statistics.median(times[side])
            cells.append(f"{t:>7.2f}s {t / base:>4.1f}×")
        print(f"  {path.name:<16}{cells[0]}{cells[1]:>17}{cells[2]:>17}")
        print(
            f"  {'  peak MB':<16}"
            + "".join(f"{peaks[k]:>{w}.0f} " for k, w in zip(peaks, (9, 15, 15), strict=True))
        )
    print()


def memtui_stats(store: Path) -> list[str]:
    return [sys.executable, "-m", "memtui", "stats", str(store)]


def run(folder: Path, size: int, touch: int, stats_runs: int = 0, before: str = "") -> None:
    memories = make_demo_memories(size, 1, NOW)
    native = folder / "native.json"
    create_native_store(native, memories, now=NOW, kind="import", reason="bench")
    pi = folder / "pi.json"
    export_store(open_store(native), pi, "pi", NOW)
    longterm = folder / "longterm.jsonl"
    export_store(open_store(native), longterm, "longterm-jsonl", NOW)
    sizes = ", ".join(f"{p.stem} {p.stat().st_size / 1e6:.1f} MB" for p in (native, pi, longterm))
    print(f"{size:,} entries; files: {sizes}")
    print()
    if stats_runs:
        whole_process_stats(folder, [native, pi, longterm], stats_runs, before)
    print(f"{'load':<34}{'memtui':>10}{'baseline':>12}  baseline is")

    def tinydb_read() -> None:
        db = TinyDB(native)
        db.table("memories").all()
        db.close()

    for label, path, baseline, what in (
        ("native (TinyDB file)", native, tinydb_read, "TinyDB open + table.all()"),
        ("pi memory-store.json", pi, lambda: json.loads(pi.read_bytes()), "stdlib json.loads"),
        ("longterm JSON Lines", longterm, lambda: read_lines(longterm), "stdlib json per line"),
    ):
        ours = best_of(3, lambda p=path: open_store(p))
        theirs = best_of(3, baseline)
        print(f"  {label:<32}{ours:>9.3f}s{theirs:>11.3f}s  {what}")

    print()
    title = f"commit {touch:,} entries"
    print(f"{title:<34}{'memtui':>10}{'baseline':>12}  baseline is")
    for label, path in (("native", native), ("pi", pi), ("longterm", longterm)):
        store = open_store(path)
        chosen = store.memories()[:: max(1, len(store) // touch)][:touch]
        changes = [Change(m, m.with_(importance=round(m.importance * 0.9, 4))) for m in chosen]
        start = time.perf_counter()
        store.commit(changes, actor="user", kind="edit", reason="bench", now=NOW + timedelta(1))
        ours = time.perf_counter() - start
        baseline, what = "", ""
        if label == "native":
            per_call = tinydb_update_cost(folder, native)
            baseline = f"{per_call * touch:>10.1f}s"
            what = f"TinyDB Table.update x{touch} ({per_call:.2f}s per call, measured on 3)"
        print(f"  {label:<32}{ours:>9.3f}s{baseline:>12}  {what}")


def read_lines(path: Path) -> list[object]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def tinydb_update_cost(folder: Path, native: Path) -> float:
    copy = folder / "tinydb-copy.json"
    shutil.copyfile(native, copy)
    db = TinyDB(copy)
    table = db.table("memories")
    ids = [doc.doc_id for doc in table.all()[:3]]
    times = []
    for doc_id in ids:
        start = time.perf_counter()
        table.update({"importance": 0.5}, doc_ids=[doc_id])
        times.append(time.perf_counter() - start)
    db.close()
    return statistics.median(times)


if __name__ == "__main__":
    main()
