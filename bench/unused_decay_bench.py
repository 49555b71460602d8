"""How many entries does a `default` plan archive in a store where no use was ever recorded?
Memtui's own method decays such a store from each entry's creation with the half-life
30 + 335 × importance days, longer for identity and preference facts (engine/decay.py
`SLOWER`); before, it decayed by the Go system's ×0.995/day, which takes every importance
to zero within a year.

    python bench/unused_decay_bench.py

Stores: the demo store (`memtui demo`: demo/generate.py, its default size, seed 7) and
../shared/data/pi/realistic-store.json, each as it is and with its uses taken out (no access
time, no access count); plans at the store's newest entry + 1 day ("today") and one year later.
Rows: the rule before (×0.995/day from the latest of creation, access and decay), and the
half-life from creation with identity and preference ×1, ×1.5, ×2 and ×3. Figures: archive
actions proposed / of them approved by default (the wholesale guard holds the rest) / active.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from unittest.mock import patch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memtui.demo import DEFAULT_SIZE, make_demo_memories
from memtui.engine import decay, planner
from memtui.engine.planner import make_plan
from memtui.engine.profiles import Profile, get_profile
from memtui.model import Memory, Status
from memtui.stores import open_store
from memtui.times import parse_iso

SHARED = next((p / "shared" for p in ROOT.parents if (p / "shared" / "data").is_dir()), ROOT)
REALISTIC = SHARED / "data" / "pi" / "realistic-store.json"
DEMO_NOW = parse_iso("2026-12-01T00:00:00Z")


@contextmanager
def rule(factor: float | None) -> Iterator[None]:
    """Plan with the rule before (None) or the half-life with this factor."""

    def chosen(profile: Profile, memories: Sequence[Memory]) -> decay.DecayModel | None:
        if factor is None or not decay.never_used(memories):
            return decay.decay_for(profile)
        slower = (("identity", factor), ("preference", factor))
        return decay.DecayModel("halflife", 1.0, slower=slower)

    with patch.object(planner, "decay_for_store", chosen):
        yield


def unused(memories: Sequence[Memory]) -> list[Memory]:
    return [m.with_(last_accessed_at=None, access_count=0) for m in memories]


def archived(memories: Sequence[Memory], now: datetime) -> str:
    plan = make_plan(memories, get_profile("default"), now, store="bench")
    archives = [a for a in plan.actions if a.kind == "archive"]
    approved = set(plan.default_approved())
    active = sum(m.status is Status.ACTIVE for m in memories)
    return f"{len(archives):>4} / {sum(a.id in approved for a in archives):>4} / {active}"


def main() -> None:
    stores = [("demo", make_demo_memories(DEFAULT_SIZE, 7, DEMO_NOW), DEMO_NOW)]
    if REALISTIC.exists():
        memories = open_store(REALISTIC).memories()
        newest = max(m.created_at for m in memories if m.created_at)
        stores.append(("realistic", memories, newest + timedelta(days=1)))
    rules: list[tuple[str, float | None]] = [("before (×0.995/day)", None)]
    rules += [(f"half-life, ×{f:g}", f) for f in (1.0, 1.5, 2.0, 3.0)]
    for name, memories, today in stores:
        for variant, entries in (("as it is", memories), ("no use recorded", unused(memories))):
            print(f"{name} ({variant}, {len(entries)} entries, today {today.date()})")
            for label, factor in rules:
                with rule(factor):
                    now, later = archived(entries, today), archived(entries, today + timedelta(365))
                print(f"  {label:<22} today {now}   +1 year {later}")


if __name__ == "__main__":
    main()
