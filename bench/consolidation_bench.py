"""Are the plans what a careful curator would do? Every profile on the consolidation set
(tests/fixtures/consolidation, labelled by its GUIDE.md), in one run.

    python bench/consolidation_bench.py [--split dev|test|both] [--embed] [--profiles a,b]

Each user store is planned on its own, as of the day after its last fact. A pair of one
user's facts is joined when one chain of pre-approved merges/absorbs takes both in. Printed
per split and language: pairwise P/R/F1 against the curated entries; recall of the pairs of
each tier (same memory / one subject) and precision of the pairs each proposed tier joined;
hard negatives wrongly joined, by kind; conflicts proposed against the labelled
contradictions. `--embed` adds `default` with the local sentence embeddings (memtui[embed]).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memtui.engine.embedded import Embeddings
from memtui.engine.plan import Plan
from memtui.engine.planner import make_plan
from memtui.engine.profiles import get_profile
from memtui.model import Memory
from tests.consolidation_set import (
    HARD_KINDS,
    TIERS,
    Fact,
    Score,
    load_facts,
    load_hard_pairs,
    score_set,
)

PROFILES = ("pi", "longterm", "thesearch", "default")


def planner(name: str, vectors: Embeddings | None = None):  # type: ignore[no-untyped-def]
    chosen = get_profile(name.removesuffix("+embed"))

    def plan_for(memories: list[Memory], now: datetime) -> Plan:
        return make_plan(memories, chosen, now, store_format="native", embeddings=vectors)

    return plan_for


def fact_embeddings(facts: Sequence[Fact]) -> Embeddings | None:
    from memtui.embedding import EmbeddingsUnavailable, load_embedder

    try:
        embedder = load_embedder()
    except EmbeddingsUnavailable as e:
        print(f"  (no embeddings: {e})")
        return None
    rows = embedder.embed([f.text for f in facts])
    return Embeddings(embedder.name, dict(zip((f.id for f in facts), rows, strict=True)))


def show(name: str, scores: dict[str, Score], seconds: float) -> None:
    for lang in ("en", "zh", "all"):
        if lang not in scores:
            continue
        s = scores[lang]
        tiers = "  ".join(
            f"{t}: R {s.recall_by_tier[t].recall:4.2f} P {s.precision_by_tier[t].precision:4.2f}"
            f" ({s.precision_by_tier[t].tp + s.precision_by_tier[t].fp})"
            for t in TIERS
        )
        hard = " ".join(f"{k} {s.hard_joined[k][0]}/{s.hard_joined[k][1]}" for k in HARD_KINDS)
        c = s.conflicts
        print(
            f"  {name:15} {lang:3} {s.overall.row()}  merges {s.merges:4}  | {tiers}\n"
            f"  {'':15}     wrongly joined: {hard} | conflicts {c.tp + c.fp} proposed, "
            f"P {c.precision:4.2f} R {c.recall:4.2f}"
            + (f"  [{seconds:.1f}s]" if lang == "all" else "")
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test", "both"), default="both")
    parser.add_argument("--embed", action="store_true")
    parser.add_argument("--profiles", default=",".join(PROFILES))
    parser.add_argument("--folder", type=Path, default=None)
    args = parser.parse_args()
    kwargs = {} if args.folder is None else {"folder": args.folder}
    facts = load_facts(**kwargs)
    hard = load_hard_pairs(**kwargs)
    users = {f.user for f in facts}
    print(f"consolidation set: {len(facts)} facts in {len(users)} user stores")
    names = [n for n in args.profiles.split(",") if n]
    vectors = fact_embeddings(facts) if args.embed else None
    if vectors is not None:
        names.append("default+embed")
    splits = ("dev", "test") if args.split == "both" else (args.split,)
    for split in splits:
        chosen = [f for f in facts if f.split == split]
        print(f"\n{split}: {len(chosen)} facts, {len({f.user for f in chosen})} users")
        for name in names:
            start = time.perf_counter()
            scores = score_set(chosen, hard, planner(name, vectors if "embed" in name else None))
            show(name, scores, time.perf_counter() - start)


if __name__ == "__main__":
    main()
