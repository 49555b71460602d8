"""Applying and undoing a plan: linear in the plan, side by side with the previous (quadratic)
implementation in the same run, at growing store sizes so the growth is visible.

    python bench/apply_bench.py [--sizes 2000,5000,10000,20000] [--profile longterm]

For each size: a native store of realistic demo entries (one user), its plan, then
- apply: `curate.apply_plan` with every pre-approved action, with memtui's indexed action lookup
  and with the previous linear scan per lookup (the baseline);
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

from memtui import curate
from memtui.demo import make_demo_memories
from memtui.engine.plan import Action, Plan, plan_changes
from memtui.engine.planner import make_plan
from memtui.engine.profiles import get_profile
from memtui.errors import MemtuiError
from memtui.stores import Change, create_native_store, open_store

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


def one_size(folder: Path, size: int, profile: str) -> tuple[int, int, float, float, float, float]:
    memories = make_demo_memories(size, 1, NOW)
    source = folder / f"source-{size}.json"
    create_native_store(source, memories, now=NOW, kind="import", reason="bench")
    store = open_store(str(source))
    plan = make_plan(store.memories(), get_profile(profile), NOW, store_format="native")
    plan.store, plan.store_fingerprint = str(store.path), store.fingerprint
    approved = plan.default_approved()
    touched = len(plan_changes(plan, approved))

    def apply_copy(name: str) -> float:
        path = folder / f"{name}-{size}.json"
        shutil.copyfile(source, path)
        target = open_store(str(path))
        plan.store = str(target.path)
        return timed(lambda: curate.apply_plan(target, plan, approved, now=NOW))

    with previous_lookup():
        before = apply_copy("before")
    after = apply_copy("after")
    applied = open_store(str(folder / f"after-{size}.json"))
    undo = timed(lambda: applied.undo(now=NOW))

    floor_path = folder / f"floor-{size}.json"
    shutil.copyfile(source, floor_path)

    def load_and_commit() -> None:
        floor = open_store(str(floor_path))
        changes = [Change(m, m.with_(importance=m.importance / 2)) for m in floor.memories()]
        floor.commit(changes[:touched], actor="user", kind="edit", reason="", now=NOW)

    floor = timed(load_and_commit)
    return len(plan.actions), touched, before, after, undo, floor


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="2000,5000,10000,20000")
    parser.add_argument("--profile", default="longterm")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="memtui-apply-bench-"))
    print(f"profile {args.profile}; times in seconds (one run each, same process)")
    print(
        f"{'entries':>8} {'actions':>8} {'touched':>8} {'apply before':>13} "
        f"{'apply now':>10} {'speed-up':>9} {'undo':>7} {'load+commit':>12}"
    )
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            actions, touched, before, after, undo, floor = one_size(folder, size, args.profile)
            print(
                f"{size:>8} {actions:>8} {touched:>8} {before:>13.2f} {after:>10.2f} "
                f"{before / after:>8.1f}× {undo:>7.2f} {floor:>12.2f}",
                flush=True,
            )
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
