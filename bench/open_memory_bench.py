"""Memory of an open store, per entry, before and after in the same run: each a process that
opens the store (`open_store(...).memories()`) and says what the open store holds (the Python
objects, as tracemalloc counts them, in a run of its own; the growth of resident memory, which
also keeps what the parse freed into Python's allocator) and the peak resident memory,
against the code of `--before` (default: where HEAD left main).

    python bench/open_memory_bench.py [--entries 100000] [--users 100] [--formats native,pi]
                                      [--runs 1] [--before REF] [--keep DIR]

At 1M entries hold the shared lock: `flock /tmp/memtui-big.lock python bench/...`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from before_tree import ROOT, branch_point, compile_tree, unpack

_OPEN = """
import gc, json, resource, sys, tracemalloc
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096
from memtui.stores import open_store
traced = sys.argv[2] == "traced"
if traced:
    tracemalloc.start()
start = rss()
store = open_store(sys.argv[1])
n = len(store.memories())
gc.collect()
live = tracemalloc.get_traced_memory()[0] if traced else 0
print(json.dumps({"n": n, "held": rss() - start, "live": live,
                  "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def measure(store: Path, source: Path, traced: bool = False) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _OPEN, str(store), "traced" if traced else "rss"],
        env={**os.environ, "PYTHONPATH": str(source)},
        cwd=source,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    found: dict[str, float] = json.loads(out)
    return found


_MAKE = """
import sys
from datetime import UTC, datetime
from pathlib import Path
sys.path.insert(0, "bench")
from pairs_bench import make_store
from memtui.stores import export_store, open_store
folder, entries, users, formats = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
native = make_store(folder, "native", entries, users)
now = datetime(2026, 11, 30, tzinfo=UTC)
for name, fmt in (("pi", "pi"), ("longterm", "longterm-jsonl")):
    if name in formats.split(","):
        suffix = ".jsonl" if name == "longterm" else ".json"
        export_store(open_store(native), folder / (name + suffix), fmt, now)
"""


def make(folder: Path, entries: int, users: int, formats: list[str]) -> dict[str, Path]:
    subprocess.run(
        [sys.executable, "-c", _MAKE, str(folder), str(entries), str(users), ",".join(formats)],
        cwd=ROOT,
        check=True,
    )
    return {f: p for f, p in make_paths(folder).items() if f in formats}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--formats", default="native,pi,longterm")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--before", help="the git ref to compare with (default: the branch point)")
    parser.add_argument("--after", help="a git ref to measure instead of the checkout")
    parser.add_argument("--keep", help="make (or reuse) the stores in this folder and keep them")
    args = parser.parse_args()
    formats = args.formats.split(",")
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="memtui-openmem-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        stores = {f: p for f, p in make_paths(folder).items() if f in formats}
        if not all(p.exists() for p in stores.values()):
            stores = make(folder, args.entries, args.users, formats)
        ref = args.before or branch_point()
        before = folder / "before"
        shutil.rmtree(before, ignore_errors=True)
        unpack(ref, before)
        after = ROOT
        if args.after:
            after = folder / "after"
            shutil.rmtree(after, ignore_errors=True)
            unpack(args.after, after)
        compile_tree(after)
        print(
            "open memory, bytes per entry: Python objects held (tracemalloc) / resident memory "
            f"held / peak resident memory; before is {ref}"
        )
        for fmt, path in stores.items():
            cells = {}
            for side, source in (("before", before), ("after", after)):
                runs = [measure(path, source) for _ in range(args.runs)]
                n = runs[0]["n"]
                held = min(r["held"] for r in runs) / n
                peak = min(r["peak"] for r in runs) / n
                live = measure(path, source, traced=True)["live"] / n
                cells[side] = f"{live:>5.0f} / {held:>5.0f} / {peak:>5.0f}"
            size = path.stat().st_size / n
            print(
                f"  {fmt:<9} {n:>9,} entries ({size:.0f} B each in the file)   "
                f"before {cells['before']}   after {cells['after']}"
            )
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


def make_paths(folder: Path) -> dict[str, Path]:
    return {
        "native": folder / "native.json",
        "pi": folder / "pi.json",
        "longterm": folder / "longterm.jsonl",
    }


if __name__ == "__main__":
    main()
