"""Wall time of short `memtui` commands, before (a checkout of the base commit) beside after
(this working tree): `memtui --version`, `memtui locate`, `memtui list STORE --limit 1` on a
copy of tests/fixtures/realistic-store.json; the median of N runs each, run alternately.

    python bench/cli_startup_bench.py [--base REV] [--runs 5]

The base is checked out with `git worktree add --detach` into a temporary folder (removed at
the end) and run with this interpreter and its installed dependencies (`PYTHONPATH`), from a
folder outside both trees so neither shadows the other.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from before_tree import branch_point

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "realistic-store.json"


def _wall(tree: Path, argv: list[str], home: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree), "HOME": str(home)}
    env.pop("MEMTUI_CONFIG", None)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "memtui", *argv],
        cwd=home,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="the commit before (default: where this branch left main)")
    parser.add_argument("--runs", type=int, default=5)
    opts = parser.parse_args()
    if opts.base is None:
        opts.base = branch_point()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        base = work / "base"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base), opts.base],
            check=True,
            capture_output=True,
        )
        try:
            store = work / "memory-store.json"
            shutil.copy(FIXTURE, store)
            home = work / "home"
            home.mkdir()
            commands = {
                "memtui --version": ["--version"],
                "memtui locate": ["locate"],
                "memtui list STORE --limit 1": ["list", str(store), "--limit", "1"],
            }
            trees = {"before": base, "after": ROOT}
            for argv in commands.values():  # warm the file cache and the .pyc files
                for tree in trees.values():
                    _wall(tree, argv, home)
            print(f"median of {opts.runs} runs, seconds (base {opts.base})")
            print(f"{'command':<30} {'before':>7} {'after':>7}")
            for name, argv in commands.items():
                times: dict[str, list[float]] = {k: [] for k in trees}
                for _ in range(opts.runs):
                    for label, tree in trees.items():
                        times[label].append(_wall(tree, argv, home))
                before, after = (statistics.median(times[k]) for k in trees)
                print(f"{name:<30} {before:7.3f} {after:7.3f}")
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)],
                check=False,
                capture_output=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
