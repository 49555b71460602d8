"""Plan files: version 1 (a whole record before and after every change, stdlib JSON for
`--json`) against version 2 (changed fields, fingerprints, bulk decay rows, orjson), side by
side in one run, each as a whole `memtui plan` process (start-up included; peak memory from
/usr/bin/time).

    python bench/plan_file_bench.py [--entries 100000] [--users 100] [--profiles longterm,default]

For each profile: `memtui plan STORE --out F` and `memtui plan STORE --out F --json`, with
`--plan-version 1` (the previous writer) and the default version 2; then reading the v2 file
back against the store (`planfile.load`).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pairs_bench import make_store, memtui, run

from memtui import planfile
from memtui.stores import open_store


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--profiles", default="longterm,default")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="memtui-planfile-"))
    try:
        store = make_store(folder, "store", args.entries, args.users)
        print(f"{args.entries:,} entries, {args.users} users ({store.stat().st_size:,} bytes)")
        print(
            f"{'profile':<9} {'run':<12} {'v1 s':>7} {'v1 MB':>7} {'v1 file':>13} "
            f"{'v2 s':>7} {'v2 MB':>7} {'v2 file':>13}"
        )
        for profile in args.profiles.split(","):
            for label, extra in (("--out", []), ("--out --json", ["--json"])):
                cells = []
                for version in ("1", "2"):
                    out = folder / f"plan-{profile}-{version}.json"
                    out.unlink(missing_ok=True)
                    wall, peak, stdout = run(
                        memtui(
                            "plan",
                            str(store),
                            "--profile",
                            profile,
                            "--out",
                            str(out),
                            "--plan-version",
                            version,
                            *extra,
                        )
                    )
                    size = out.stat().st_size + len(stdout if extra else b"")
                    cells.append(f"{wall:>7.1f} {peak:>7.0f} {size:>13,}")
                print(f"{profile:<9} {label:<12} {'  '.join(cells)}")
            v2 = folder / f"plan-{profile}-2.json"
            start = time.perf_counter()
            plan = planfile.load(str(v2), open_store(store), None)
            print(
                f"{profile:<9} read v2 back against the store: {time.perf_counter() - start:.1f} s,"
                f" {len(plan.actions):,} actions"
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
