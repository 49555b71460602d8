"""Planning at scale, before and after side by side in one run: the same `memtui plan` runs
with the previous implementation (a git ref, by default the commit this branch left `main` at,
exported to a temporary folder and put first on PYTHONPATH) and with this checkout, each as a
whole process (start-up included; peak memory from /usr/bin/time; CPU = user + system).

    python bench/plan_scale_bench.py [--entries 100000] [--users 100] [--pi-entries 20000]
                                     [--before REF]

1. `memtui plan STORE --profile longterm|default --out F` and the same with `--json`
   (stdout to /dev/null), on ENTRIES entries of USERS users;
2. `memtui plan STORE --profile pi --out F` on a PI_ENTRIES-entry pi-format store;
3. reading each version's own version-2 file back against its store (`planfile.load`), in a
   process of its own.
The plans of both must be the same: the files byte for byte or, where the file layout changed
(bulk expiry rows), every action's full records, reasons and scores as read back.

Figures (2 cores, not quiet: other jobs ran), `--entries 2000 --users 2`, the pi line, CPU s /
peak MB: 5.5 / 609 before, 2.9 / 313 after building pi's 1.47 M candidate pairs as arrays
(engine/candidates.py `PairTable`) instead of `Pair` objects; the same file.

Plans streamed user by user (issue 24 item 2; `--before 60e41f2`, 100,000 entries / 100 users,
2 cores shared with other jobs and with bench/plan_memory_bench.py, so the walls are noisy),
wall s / CPU s / peak MB, before → after, every file the same byte for byte:
longterm --out 24.9 / 11.0 / 545 → 35.1 / 16.7 / 395; longterm --out --json
43.1 / 12.5 / 545 → 81.6 / 22.2 / 402; default --out 93.4 / 27.3 / 739 → 114.4 / 33.0 / 443;
default --out --json 51.6 / 26.7 / 739 → 49.9 / 34.0 / 448. The peak is now the open store
and the planning of one user; the CPU grows by a fifth to a half (the spool: each action
pickled and read back once, and the join's renaming done per action).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from before_tree import branch_point
from pairs_bench import ENV, ROOT, make_store

_READ_BACK = (
    "import gc, sys; gc.disable(); from memtui import planfile;"
    "from memtui.stores import open_store;"
    "plan = planfile.load(sys.argv[2], open_store(sys.argv[1]), None)"
)
_DIGEST = (
    _READ_BACK + "; import hashlib, orjson;"
    "print(hashlib.sha256(orjson.dumps(plan.to_dict())).hexdigest())"
)


def same_plan(store: Path, files: list[Path]) -> str:
    """ "yes" when the two files hold the same plan (read back with this checkout)."""
    if files[0].read_bytes() == files[1].read_bytes():
        return "yes (same file)"
    digests = {
        subprocess.run(
            [sys.executable, "-c", _DIGEST, str(store), str(f)],
            env={**ENV, "PYTHONPATH": str(ROOT)},
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        for f in files
    }
    return "yes (same plan read back)" if len(digests) == 1 else "NO"


def run(args: list[str], source: Path, stdout: Path | None = None) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MB) of one process run against `source`."""
    timing = Path(tempfile.mktemp(suffix=".time"))
    env = {**ENV, "PYTHONPATH": str(source)}
    out = open(stdout or os.devnull, "wb")  # noqa: SIM115
    start = time.perf_counter()
    try:
        cmd = ["/usr/bin/time", "-o", str(timing), "-f", "%e %U %S %M", *args]
        # in the source's folder: `python -m` puts the working folder before PYTHONPATH
        subprocess.run(cmd, env=env, check=True, stdout=out, cwd=source)
    finally:
        out.close()
    wall = time.perf_counter() - start
    _, user, system, peak = timing.read_text().split()[-4:]
    timing.unlink()
    return wall, float(user) + float(system), float(peak) / 1024


def best(runs: list[tuple[float, float, float]]) -> str:
    """The shortest wall and CPU time and the highest peak of some runs, as one cell."""
    wall, cpu, peak = min(r[0] for r in runs), min(r[1] for r in runs), max(r[2] for r in runs)
    return f"{wall:>7.1f} {cpu:>6.1f} {peak:>7.0f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--pi-entries", type=int, default=20_000)
    parser.add_argument(
        "--before", help="the git ref of the previous version (default: where HEAD left main)"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="runs of each, before and after taking turns; the best time and the highest peak "
        "are shown (on a shared machine the CPU seconds of one run vary by a third)",
    )
    args = parser.parse_args()
    if args.before is None:
        args.before = branch_point()
    folder = Path(tempfile.mkdtemp(prefix="memtui-planscale-"))
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
    big = make_store(folder, "big", args.entries, args.users)
    pi = make_store(folder, "pi", args.pi_entries, 1, "pi")
    print(f"before: {args.before}; after: this checkout. wall s / CPU s / peak MB")
    print(f"{'run':<44} {'before':>22} {'after':>22}  same plan?")
    cases = [
        ("longterm", big, [], f"{args.entries:,}/{args.users}"),
        ("longterm", big, ["--json"], f"{args.entries:,}/{args.users}"),
        ("default", big, [], f"{args.entries:,}/{args.users}"),
        ("default", big, ["--json"], f"{args.entries:,}/{args.users}"),
        ("pi", pi, [], f"{args.pi_entries:,}/1 pi"),
    ]
    for profile, store, extra, label in cases:
        found: dict[str, list[tuple[float, float, float]]] = {"before": [], "after": []}
        sources = {"before": before, "after": ROOT}
        files = [folder / f"{profile}-{name}.json" for name in sources]
        cmd = [sys.executable, "-m", "memtui", "plan", str(store), "--profile", profile]
        for _ in range(args.repeat):
            for (name, source), out in zip(sources.items(), files, strict=True):
                out.unlink(missing_ok=True)
                found[name].append(run([*cmd, "--out", str(out), *extra], source))
        cells = [best(found[name]) for name in sources]
        same = same_plan(store, files)
        run_label = f"plan {profile} {' '.join(['--out', *extra])} ({label})"
        print(f"{run_label:<44} {cells[0]:>22} {cells[1]:>22}  {same}", flush=True)
        sizes = [f"{f.stat().st_size / 1e6:>21.1f}M" for f in files]
        print(f"{'  plan file size':<44} {sizes[0]} {sizes[1]}", flush=True)
        if not extra:
            back = [
                best(
                    [
                        run([sys.executable, "-c", _READ_BACK, str(store), str(plan)], source)
                        for _ in range(args.repeat)
                    ]
                )
                for source, plan in zip((before, ROOT), files, strict=True)
            ]
            print(f"{'  read back + planfile.load':<44} {back[0]:>22} {back[1]:>22}", flush=True)


if __name__ == "__main__":
    main()
