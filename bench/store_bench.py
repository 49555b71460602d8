"""Store figures at 100k entries, side by side with a baseline measured in the same run.

    python bench/store_bench.py [--size 100000]

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
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="memtui-bench-"))
    try:
        run(folder, args.size, args.touch)
    finally:
        shutil.rmtree(folder)


def run(folder: Path, size: int, touch: int) -> None:
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
