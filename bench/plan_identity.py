"""Plans every fixture store (and generated ones) with every built-in profile and writes one
digest per (store, profile): run it before and after a planner change and compare the files.

    python bench/plan_identity.py > before.txt   # on the old code
    python bench/plan_identity.py > after.txt    # on the new code
    diff before.txt after.txt                    # nothing: every plan is byte-identical
    python bench/plan_identity.py --by-user > by-user.txt  # planned one user at a time
    diff after.txt by-user.txt                   # nothing: the same plans
    python bench/plan_identity.py --jobs 2 > jobs.txt            # in two worker processes
    python bench/plan_identity.py --streamed --jobs 2 > streamed.txt  # as `memtui plan`
                                                 # streams a big store (user by user)
    python bench/plan_identity.py --file ...     # also the digest of the version-2 file
                                                 # (streamed: as `memtui plan --out` writes it)
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memtui import planfile
from memtui.demo.generate import make_demo_memories
from memtui.engine.planner import make_plan, plan_each_user
from memtui.engine.profiles import PROFILE_NAMES, get_profile
from memtui.planfile.streaming import PlanWriter, tee
from memtui.service.parallel_plan import plan_in_parallel
from memtui.service.plan_stream import plan_streamed
from memtui.stores import open_store

NOW = datetime(2026, 12, 1, tzinfo=UTC)
FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"


def _stores() -> list[tuple[str, list, str, Any]]:
    out = []
    for path in sorted(FIXTURES.rglob("*")):
        if path.suffix not in (".json", ".jsonl") or not path.is_file():
            continue
        try:
            store = open_store(str(path))
            memories = store.memories()
        except Exception:  # not a store (a report, a label file): skipped
            continue
        out.append((str(path.relative_to(FIXTURES)), memories, store.format_name, store))
    for n, users in ((400, 7), (3000, 12), (6000, 40)):
        out.append(
            (f"generated-{n}-seed{users}", make_demo_memories(n, users, NOW), "native", None)
        )
    # the bench's store: users taking turns, every step's actions interleaved across users
    mixed = make_demo_memories(8000, 11, NOW)
    names = [f"user-{n:03d}" for n in range(20)]
    mixed = [m.with_(user_id=names[i % 20]) for i, m in enumerate(mixed)]
    out.append(("generated-8000-20-users-in-turn", mixed, "native", None))
    return out


def _streamed(memories: list, profile: Any, now: datetime, **options: Any) -> Any:
    plan = plan_streamed(memories, profile, now, **options)
    actions: list = []
    if "--file" not in sys.argv:
        return dataclasses.replace(plan.head, actions=list(plan.actions))
    # as `memtui plan --out` writes it
    writer = PlanWriter(plan.head, 2, by_user=plan.by_user, prints=plan.prints, hints=plan.hints)
    parts: list[bytes] = []
    tee(_kept(plan.actions, actions), [(writer, parts.append)], lambda: plan.summary)
    file = b"".join(parts)
    whole = dataclasses.replace(plan.head, actions=actions)
    _FILES[id(whole)] = file
    return whole


_FILES: dict[int, bytes] = {}
"""A streamed plan's version-2 file, by the plan's identity."""


def _kept(actions: Any, into: list) -> Any:
    for action in actions:
        into.append(action)
        yield action


def _file_digest(plan: Any) -> str:
    file = _FILES.pop(id(plan), None)
    if file is None:
        file = planfile.to_bytes(plan, 2)
    return "\t" + hashlib.sha256(file).hexdigest()


def _planner() -> Any:
    argv = sys.argv[1:]
    jobs = int(argv[argv.index("--jobs") + 1]) if "--jobs" in argv else None
    if "--streamed" in argv:
        return functools.partial(_streamed, jobs=jobs or 1)
    if jobs is not None:
        return functools.partial(plan_in_parallel, jobs=jobs)
    return plan_each_user if "--by-user" in argv else make_plan


def main() -> None:
    planner = _planner()
    count = 0
    for name, memories, store_format, store in _stores():
        # the id style the service plans a store with (older code: its format's name)
        traits = getattr(store, "traits", None)
        ids = {} if traits is None else {"ids": traits.ids}
        for profile in PROFILE_NAMES:
            plan = planner(
                memories, get_profile(profile), NOW, store=name, store_format=store_format, **ids
            )
            text = json.dumps(plan.to_dict(), sort_keys=True, ensure_ascii=False)
            digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
            file = _file_digest(plan) if "--file" in sys.argv else ""
            print(f"{name}\t{profile}\t{len(plan.actions)}\t{digest}{file}")
            count += 1
    print(f"{count} plans", file=sys.stderr)


if __name__ == "__main__":
    main()
