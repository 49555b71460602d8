"""Planning by user in parallel, side by side in one run: `memtui plan STORE --profile P
--out F` with the previous implementation (a git ref, by default where this branch left
`main`: the whole store in one piece), then this checkout with `--jobs 1` (one process, one
user at a time) and `--jobs 2` (two worker processes), each as a whole process (start-up,
opening and writing included; peak memory from /usr/bin/time: the largest single process,
so with `--jobs 2` the parent or one worker; CPU = user + system of the process and its
workers). The plan files of `--jobs 1` and `--jobs 2` must be byte-identical; the previous
code's must say the same counts and warnings (before 2026-12-02 its actions came step by step
across users, since then user by user).

    python bench/plan_jobs_bench.py [--entries 100000] [--users 100] [--before REF] [--repeat N]

The store is `pairs_bench.make_store`'s (`memtui demo`'s generator, users taking turns).

Figures: bench/README.md, "Plans in user order" (100k entries of 100 users, longterm: --jobs 1
15.9 s wall / 15.9 CPU / 277 MB, --jobs 2 14.4 / 25.2 / 280, against the whole-store planner's
15.6 / 15.7 / 563).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from before_tree import branch_point
from pairs_bench import ROOT, make_store
from plan_scale_bench import best, run

NOW = "2026-12-01T00:00:00Z"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--profiles", default="longterm,default")
    parser.add_argument("--before", help="the git ref to compare with (default: the merge base)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each (best time shown)")
    args = parser.parse_args()
    if args.before is None:
        args.before = branch_point()
    folder = Path(tempfile.mkdtemp(prefix="memtui-planjobs-"))
    try:
        before = folder / "before"
        before.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.before], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(before)], input=archive, check=True)
        bench(folder, before, args)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def bench(folder: Path, before: Path, args: argparse.Namespace) -> None:
    store = make_store(folder, "store", args.entries, args.users)
    print(
        f"memtui plan --out on {args.entries:,} entries of {args.users} users "
        f"(before = {args.before}, whole store in one process)"
    )
    print(f"{'profile':<10}{'run':<10}{'wall s':>7} {'CPU s':>6} {'peak MB':>7}  same plan?")
    plan = [sys.executable, "-m", "memtui", "plan", str(store), "--now", NOW, "--out"]
    for profile in args.profiles.split(","):
        files = {name: folder / f"{profile}-{name}.json" for name in ("before", "jobs1", "jobs2")}
        runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in files}
        for _ in range(args.repeat):
            profile_args = ["--profile", profile]
            runs["before"].append(run([*plan, str(files["before"]), *profile_args], before))
            for jobs in ("1", "2"):
                out = files[f"jobs{jobs}"]
                runs[f"jobs{jobs}"].append(
                    run([*plan, str(out), *profile_args, "--jobs", jobs], ROOT)
                )
        reference = files["jobs1"].read_bytes()
        for name, timings in runs.items():
            if name == "before":  # older code may order the actions otherwise
                same = "same counts" if _counts(files[name]) == _counts(files["jobs1"]) else "NO"
            else:
                same = "yes (same file)" if files[name].read_bytes() == reference else "NO"
            label = name if name == "before" else f"--jobs {name[-1]}"
            print(f"{profile:<10}{label:<10}{best(timings)}  {same}")


def _counts(path: Path) -> tuple[object, object]:
    """What a plan file says it does: its summary and warnings (in any order of actions)."""
    data = json.loads(path.read_bytes())
    return data["summary"], sorted(data.get("warnings", []))


if __name__ == "__main__":
    main()
