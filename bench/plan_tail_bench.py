"""The streamed plan's serial tail in the parent (the join and the version-2 writer), with the
row hints the workers send and without them, alternating, on the same store, in one process:
what `memtui plan --out` does after its workers are done (printing aside).

    python bench/plan_tail_bench.py STORE [--profile longterm] [--jobs 2] [--repeat 2]

Each run plans the store again (a streamed plan's actions come once), then times only the
writing (CPU of this process: the workers are done by then); every file must be the same.
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from memtui.service import Service
from memtui.stores import open_store

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store")
    parser.add_argument("--profile", default="longterm")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    svc = Service()
    store = open_store(args.store)
    profile = svc.profiles.profile(store, args.profile)
    digests = set()
    with tempfile.TemporaryDirectory(prefix="memtui-tail-") as folder:
        out = Path(folder) / "plan.json"
        for _ in range(args.repeat):
            for mode in ("hints", "no hints"):
                plan = svc.plans.plan_stream(store, profile, now=NOW, jobs=args.jobs)
                if mode == "no hints":
                    plan.hints = None
                cpu, wall = time.process_time(), time.perf_counter()
                svc.plans.write_stream(plan, str(out), 2)
                cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
                digests.add(hashlib.sha256(out.read_bytes()).hexdigest())
                print(f"{args.profile:<9} {mode:<9} join + write: {cpu:5.2f} s CPU {wall:5.2f} s")
    print("every file the same" if len(digests) == 1 else "FILES DIFFER")


if __name__ == "__main__":
    main()
