"""Applying and undoing a plan: linear in the plan, side by side with the previous (quadratic)
implementation in the same run, at growing store sizes so the growth is visible.

    python bench/apply_bench.py [--sizes 2000,5000,10000,20000] [--profile longterm]
                                [--no-baseline]

For each size: a native store of realistic demo entries (one user), its plan, then
- apply: `apply_plan` with every pre-approved action, with memtui's indexed action lookup
  and with the previous linear scan per lookup (the baseline; `--no-baseline` skips it);
- apply + progress: the same apply with a progress callback (a counter), to show that being
  watched costs nothing per entry (`calls`: how often the callback ran);
- undo: `Store.undo` of that transaction;
- load + commit: opening the store and one commit touching as many entries as the plan does,
  the floor an apply cannot beat.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memtui.demo import make_demo_memories
from memtui.engine.plan import Action, Plan, plan_changes
from memtui.engine.planner import make_plan
from memtui.engine.profiles import get_profile
from memtui.errors import MemtuiError
from memtui.service.plans import apply_plan
from memtui.stores import Change, create_native_store, open_store
from memtui.stores.progress import CommitProgress

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def _scan(plan: Plan, action_id: str) -> Action:
    """The previous `Plan.action`: a linear scan per lookup."""
    for action in plan.actions:
        if action.id == action_id:
            return action
    raise MemtuiError(f"the plan has no action {action_id!r}")


@contextmanager
def previous_lookup() -> Iterator[None]:
    indexed = Plan.action
    Plan.action = _scan  # type: ignore[method-assign]
    try:
        yield
    finally:
        Plan.action = indexed  # type: ignore[method-assign]


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def one_size(
    folder: Path, size: int, profile: str, baseline: bool
) -> tuple[int, int, float, float, float, int, float, float]:
    memories = make_demo_memories(size, 1, NOW)
    source = folder / f"source-{size}.json"
    create_native_store(source, memories, now=NOW, kind="import", reason="bench")
    store = open_store(str(source))
    plan = make_plan(store.memories(), get_profile(profile), NOW, store_format="native")
    plan.store, plan.store_fingerprint = str(store.path), store.fingerprint
    approved = plan.default_approved()
    touched = len(plan_changes(plan, approved))

    def apply_copy(name: str, progress: CommitProgress | None = None) -> float:
        path = folder / f"{name}-{size}.json"
        shutil.copyfile(source, path)
        target = open_store(str(path))
        plan.store = str(target.path)
        return timed(lambda: apply_plan(target, plan, approved, now=NOW, progress=progress))

    before = float("nan")
    if baseline:
        with previous_lookup():
            before = apply_copy("before")
    after = apply_copy("after")
    calls = 0

    def count(stage: str, done: int, total: int) -> None:
        nonlocal calls
        calls += 1

    watched = apply_copy("watched", count)
    applied = open_store(str(folder / f"after-{size}.json"))
    undo = timed(lambda: applied.undo(now=NOW))

    floor_path = folder / f"floor-{size}.json"
    shutil.copyfile(source, floor_path)

    def load_and_commit() -> None:
        floor = open_store(str(floor_path))
        changes = [Change(m, m.with_(importance=m.importance / 2)) for m in floor.memories()]
        floor.commit(changes[:touched], actor="user", kind="edit", reason="", now=NOW)

    floor = timed(load_and_commit)
    return len(plan.actions), touched, before, after, watched, calls, undo, floor


def _or_dash(value: float, fmt: str) -> str:
    return "-" if value != value else format(value, fmt)  # NaN: not measured


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="2000,5000,10000,20000")
    parser.add_argument("--profile", default="longterm")
    parser.add_argument("--no-baseline", action="store_true", help="skip the quadratic apply")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="memtui-apply-bench-"))
    print(f"profile {args.profile}; times in seconds (one run each, same process)")
    print(
        f"{'entries':>8} {'actions':>8} {'touched':>8} {'apply before':>13} "
        f"{'apply now':>10} {'speed-up':>9} {'+ progress':>11} {'calls':>6} {'undo':>7} "
        f"{'load+commit':>12}"
    )
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            actions, touched, before, after, watched, calls, undo, floor = one_size(
                folder, size, args.profile, not args.no_baseline
            )
            print(
                f"{size:>8} {actions:>8} {touched:>8} {_or_dash(before, '.2f'):>13} "
                f"{after:>10.2f} {_or_dash(before / after, '.1f') + '×':>9} "
                f"{watched:>11.2f} {calls:>6} {undo:>7.2f} "
                f"{floor:>12.2f}",
                flush=True,
            )
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
