"""Candidate search and planning, side by side with an all-pairs Python reference, each as a
whole process (start-up included), with peak memory from /usr/bin/time.

    python bench/pairs_bench.py [--quick]

1. `memtui pairs` against bench/allpairs_reference.py on one 5,000-entry single-user store:
   the same pairs, and the speed-up (pi at 0.8, tf-cosine at 0.8).
2. `memtui plan --profile pi` on that store against the reference's pi clusters.
3. `memtui plan --profile longterm` on 100,000 entries of 100 users and on 20,000 entries of one
   user; `memtui plan --profile pi` on a 10,000-entry pi-format store.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memtui.demo import make_demo_memories
from memtui.stores import create_native_store, export_store, open_store

NOW = datetime(2026, 11, 30, tzinfo=UTC)
ENV = {**os.environ, "MEMTUI_NOW": "2026-11-30T00:00:00Z", "PYTHONPATH": str(ROOT)}


def run(args: list[str], stdout: Path | None = None) -> tuple[float, float, bytes]:
    """Wall seconds, peak RSS in MB, and stdout of a whole process."""
    timing = Path(tempfile.mktemp(suffix=".time"))
    cmd = ["/usr/bin/time", "-o", str(timing), "-f", "%e %M", *args]
    start = time.perf_counter()
    out = subprocess.run(cmd, env=ENV, check=True, stdout=subprocess.PIPE).stdout
    wall = time.perf_counter() - start
    peak_kb = float(timing.read_text().split()[-1])
    timing.unlink()
    return wall, peak_kb / 1024, out


def memtui(*args: str) -> list[str]:
    return [sys.executable, "-m", "memtui", *args]


def reference(*args: str) -> list[str]:
    return [sys.executable, str(ROOT / "bench" / "allpairs_reference.py"), *args]


def make_store(folder: Path, name: str, size: int, users: int, fmt: str = "native") -> Path:
    memories = make_demo_memories(size, 11, NOW)
    names = [f"user-{n:03d}" for n in range(users)]
    memories = [m.with_(user_id=names[i % users]) for i, m in enumerate(memories)]
    native = folder / f"{name}.json"
    create_native_store(native, memories, now=NOW, kind="import", reason="bench")
    if fmt == "native":
        return native
    out = folder / f"{name}-pi.json"
    export_store(open_store(native), out, "pi", NOW)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller stores (a smoke run)")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    folder = Path(tempfile.mkdtemp(prefix="memtui-pairs-"))
    try:
        bench(folder, scale)
    finally:
        shutil.rmtree(folder)


def bench(folder: Path, scale: int) -> None:
    five = make_store(folder, "five", 5000 // scale, 1)
    print(f"1. pairs on {5000 // scale:,} entries of one user (process start included)")
    print(f"   {'method':<16}{'pairs':>9}{'memtui':>10}{'all-pairs':>11}{'speed-up':>10}  same?")
    for method in ("pi", "tf-cosine"):
        ours_t, _, ours = run(
            memtui("pairs", str(five), "--method", method, "--threshold", "0.8", "--json")
        )
        ref_t, _, ref = run(reference("pairs", str(five), method, "0.8"))
        same = json.loads(ours) == json.loads(ref)
        print(
            f"   {method + ' ≥ 0.8':<16}{len(json.loads(ours)):>9,}{ours_t:>9.2f}s{ref_t:>10.2f}s"
            f"{ref_t / ours_t:>9.1f}×  {'yes' if same else 'NO'}"
        )

    print("\n2. plan --profile pi on the same store against the reference's pi clusters")
    plan_file = folder / "plan.json"
    ours_t, ours_mb, _ = run(memtui("plan", str(five), "--profile", "pi", "--out", str(plan_file)))
    plan = json.loads(plan_file.read_text())
    existing = {m.id for m in open_store(five).memories()}
    clusters = sorted(
        sorted(t for t in a["targets"] if t in existing)
        for a in plan["actions"]
        if a["kind"] == "merge"
    )
    ref_t, _, ref = run(reference("pi-clusters", str(five), "2026-11-30T00:00:00Z"))
    same = clusters == json.loads(ref)
    print(
        f"   memtui {ours_t:.2f}s ({ours_mb:.0f} MB), all-pairs {ref_t:.2f}s: "
        f"{len(clusters)} clusters, same: {'yes' if same else 'NO'}; summary {plan['summary']}"
    )

    print("\n3. planning at scale (process start included)")
    cases = [
        (
            "longterm",
            make_store(folder, "big", 100_000 // scale, 100),
            f"{100_000 // scale:,} entries, 100 users",
        ),
        (
            "longterm",
            make_store(folder, "solo", 20_000 // scale, 1),
            f"{20_000 // scale:,} entries, 1 user",
        ),
        (
            "pi",
            make_store(folder, "pi10k", 10_000 // scale, 1, "pi"),
            f"{10_000 // scale:,} entries, pi format",
        ),
    ]
    for profile, path, label in cases:
        out = folder / f"{path.stem}.plan.json"
        seconds, peak, _ = run(memtui("plan", str(path), "--profile", profile, "--out", str(out)))
        summary = json.loads(out.read_text())["summary"]
        print(
            f"   plan --profile {profile:<9} {label:<28} {seconds:6.2f}s  peak {peak:5.0f} MB  "
            f"{summary}"
        )


if __name__ == "__main__":
    main()
