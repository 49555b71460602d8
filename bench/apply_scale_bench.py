"""Applying and undoing a whole-store plan at scale, the previous code beside this checkout in
the same run: each step a whole `memtui` process (start-up included), wall / CPU / peak RSS,
and the peak past the open store's own (what apply and undo add on top of opening).

    flock /tmp/memtui-big.lock python bench/apply_scale_bench.py [--sizes 200000,1000000]
        [--users-per 1000] [--before REF] [--format native]

For each size: a native store of demo entries (`--users-per` entries a user; `--format pi`
exports it to pi's JSON), its `longterm` plan written once by this
checkout (`memtui plan --out`), then with the previous code and with this one, each on its
own copy of the store (one data folder: the seal key), at the same `MEMTUI_NOW`:
- open: `open_store(...).memories()` (the floor both others stand on);
- apply: `memtui apply STORE PLAN --yes` (every pre-approved action);
- look: `memtui stats STORE`, the first look after the apply (what the agent changed since is
  told apart from what memtui did: the look takes memtui's transaction in);
- undo: `memtui undo STORE` of that transaction;
and whether the two stores (and their sidecar ledgers) are the same bytes after the apply and
after the undo.
The previous code is `git archive`d from `--before` (default: where HEAD left main).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from before_tree import branch_point
from pairs_bench import ENV, ROOT, make_store
from plan_scale_bench import run

NOW = "2026-12-01T00:00:00Z"
_OPEN = (
    "import sys; from memtui.stores import open_store; "
    "print(len(open_store(sys.argv[1]).memories()))"
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="200000,1000000")
    parser.add_argument("--users-per", type=int, default=1000, help="entries per user")
    parser.add_argument("--format", default="native", choices=("native", "pi"))
    parser.add_argument("--before", help="the previous version's git ref (default: merge-base)")
    parser.add_argument("--keep", help="use (and keep) this folder instead of a temporary one")
    args = parser.parse_args()
    if args.before is None:
        args.before = branch_point()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="memtui-applyscale-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        before = folder / "before"
        if not before.exists():
            before.mkdir()
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", args.before], check=True, capture_output=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(before)], input=archive, check=True)
        print(f"before: {args.before}; after: this checkout. wall s / CPU s / peak MB")
        print(f"{'step':<30} {'before':>22} {'after':>22}   past open: before / after")
        for size in (int(s) for s in args.sizes.split(",")):
            bench(folder, before, size, max(1, size // args.users_per), args.format)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


def _ledger(store: Path, named: Path | None) -> bytes:
    """A sidecar ledger's bytes (none for native), the store it names as `named` names it."""
    path = store.with_name(store.name + ".memtui") / "ledger.jsonl"
    data = path.read_bytes() if path.exists() else b""
    return data if named is None else data.replace(str(store).encode(), str(named).encode())


def cell(r: tuple[float, float, float]) -> str:
    return f"{r[0]:>7.1f} {r[1]:>6.1f} {r[2]:>7.0f}"


def bench(folder: Path, before: Path, size: int, users: int, fmt: str) -> None:
    ENV["MEMTUI_NOW"] = NOW
    source = folder / f"source-{size}.json"
    if not source.exists():
        made = make_store(folder, f"made-{size}", size, users, fmt)
        made.rename(source)
    print(f"{size:,} entries, {users:,} users ({fmt}, {source.stat().st_size:,} bytes)", flush=True)
    sources = {"before": before, "after": ROOT}
    # the same path length for both copies, so that one plan file serves both
    stores = {name: folder / f"run-{name[0]}" / f"store-{size}.json" for name in sources}
    for path in stores.values():
        path.parent.mkdir(exist_ok=True)
        shutil.copyfile(source, path)
        shutil.rmtree(path.with_name(path.name + ".memtui"), ignore_errors=True)
    ENV["MEMTUI_DATA"] = str(folder / "data")  # the seal key the plan is checked with
    plans = {name: folder / f"plan-{name}-{size}.json" for name in sources}
    wall, cpu, peak = run(
        [
            sys.executable,
            "-m",
            "memtui",
            "plan",
            str(stores["after"]),
            "--profile",
            "longterm",
            "--now",
            NOW,
            "--out",
            str(plans["after"]),
        ],
        ROOT,
    )
    print(f"  plan (this checkout, once)     {wall:>7.1f} {cpu:>6.1f} {peak:>7.0f}", flush=True)
    text = plans["after"].read_bytes()
    plans["before"].write_bytes(
        text.replace(str(stores["after"]).encode(), str(stores["before"]).encode())
    )
    del text
    results: dict[str, dict[str, tuple[float, float, float]]] = {n: {} for n in sources}
    same: dict[str, bool] = {}
    for step in ("open", "apply", "look", "undo"):
        for name, code in sources.items():
            store = str(stores[name])
            if step == "open":
                cmd = [sys.executable, "-c", _OPEN, store]
            elif step == "apply":
                cmd = [sys.executable, "-m", "memtui", "apply", store, str(plans[name]), "--yes"]
            elif step == "look":
                cmd = [sys.executable, "-m", "memtui", "stats", store]
            else:
                cmd = [sys.executable, "-m", "memtui", "undo", store]
            results[name][step] = run(cmd, code)
        if step in ("apply", "undo"):
            same[step] = stores["before"].read_bytes() == stores["after"].read_bytes() and (
                _ledger(stores["before"], stores["after"]) == _ledger(stores["after"], None)
            )
    for step in ("open", "apply", "look", "undo"):
        b, a = results["before"][step], results["after"][step]
        extra = ""
        if step in ("apply", "undo"):
            past = (b[2] - results["before"]["open"][2], a[2] - results["after"]["open"][2])
            extra = f"   {past[0]:>6.0f} / {past[1]:>6.0f}"
            extra += "   same bytes" if same[step] else "   DIFFERENT bytes"
        print(f"  {step:<28} {cell(b):>22} {cell(a):>22}{extra}", flush=True)
    for path in [source, *stores.values(), *plans.values()]:
        path.unlink(missing_ok=True)
    for path in stores.values():
        shutil.rmtree(path.with_name(path.name + ".memtui"), ignore_errors=True)


if __name__ == "__main__":
    main()
