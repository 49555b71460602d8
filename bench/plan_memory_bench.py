"""The memory a plan takes past the open store, streamed (`memtui plan --out` now) and whole
(the plan in memory, then its file: what `memtui plan --out` did before), at several sizes:
the least `RLIMIT_DATA` budget past the open store's data segment at which each succeeds
(found by halving), and that budget per entry. tests/test_plan_memory.py holds the streamed
path to a budget at 40k entries that the whole plan does not fit; this shows both grow
linearly, so the test's budget scales to bigger stores in proportion.

    python bench/plan_memory_bench.py [--sizes 20000,40000,80000] [--per-user 1000]

Stores: generated, USERS = entries / per-user users taking turns; profile longterm.

Figures (2 cores shared with other jobs; MB past the open store, to 4 MB):

    entries/users     streamed MB  KB/entry  whole MB  KB/entry
    20,000/20                  42      2.15        67      3.43
    40,000/40                  70      1.79       140      3.58
    80,000/80                 135      1.73       275      3.52

Both grow linearly: the streamed plan by about 1.75 KB an entry (the store's id indexes, the
join's maps, the version-2 writer's per-entry state), the whole plan by 3.5 KB. The test's
90 MB at 40k entries is 2.25 KB an entry: 450 MB at 200k, where the streamed plan needs about
350 and the whole plan 700.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pairs_bench import make_store

from tests.test_plan_memory import _PLAN


def fits(store: Path, how: str, budget: int, out: Path) -> bool:
    env = {**os.environ, "MEMTUI_DATA": str(out.parent / "data")}
    done = subprocess.run(
        [sys.executable, "-c", _PLAN, str(store), how, str(budget), str(out)],
        capture_output=True,
        env=env,
        check=False,
    )
    return done.returncode == 0


def least(store: Path, how: str, high: int, out: Path) -> int:
    """The least budget (MB, to 4 MB) at which planning succeeds."""
    while not fits(store, how, high, out):
        high *= 2
    low = 0
    while high - low > 4:
        mid = (low + high) // 2
        if fits(store, how, mid, out):
            high = mid
        else:
            low = mid
    return high


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="20000,40000,80000")
    parser.add_argument("--per-user", type=int, default=1000)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="memtui-planmem-"))
    print(
        f"{'entries/users':<16} {'streamed MB':>12} {'KB/entry':>9} {'whole MB':>9} {'KB/entry':>9}"
    )
    for size in (int(s) for s in args.sizes.split(",")):
        users = max(2, size // args.per_user)
        store = make_store(folder, f"s{size}", size, users)
        out = folder / "plan.json"
        streamed = least(store, "streamed", size // 500, out)
        whole = least(store, "whole", size // 250, out)
        print(
            f"{f'{size:,}/{users}':<16} {streamed:>12} {streamed * 1024 / size:>9.2f} "
            f"{whole:>9} {whole * 1024 / size:>9.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
