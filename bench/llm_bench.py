"""Planning with a model: 100 merge clusters against a local OpenAI-compatible server that
answers in 200 ms, at concurrency 1, 4 and 8 (the same plan each time, no cache).

    python bench/llm_bench.py [--clusters 100] [--delay 0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from fake_llm import FakeLLM, chat

from memtui.engine.llm_strategies import improve_plan
from memtui.engine.planner import make_plan
from memtui.engine.profiles import get_profile
from memtui.llm import LlmClient, LlmSettings, MemoryCache
from memtui.model import Memory

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def clustered_memories(clusters: int) -> list[Memory]:
    """`clusters` pairs of near-duplicates (tf-cosine 0.83: merged, not absorbed), no two
    pairs sharing a word."""
    rng = random.Random(4)
    out = []
    for n in range(clusters):
        words = [f"w{n}x{k}{rng.randrange(10**6)}" for k in range(6)]
        out.append(Memory(id=f"{n}a", content=" ".join(words), user_id="u", created_at=NOW))
        out.append(
            Memory(id=f"{n}b", content=" ".join([*words[:5], f"z{n}"]), user_id="u", created_at=NOW)
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clusters", type=int, default=100)
    parser.add_argument("--delay", type=float, default=0.2)
    args = parser.parse_args()
    memories = clustered_memories(args.clusters)
    profile = get_profile("longterm")
    reply = json.dumps({"mergedContent": "a merged memory, worded by the model"})
    server = FakeLLM(lambda seen, n: chat(reply, delay=args.delay))
    try:
        print(f"{args.clusters} merge clusters, server answers in {args.delay * 1000:.0f} ms")
        for concurrency in (1, 4, 8):
            start = time.perf_counter()
            plan = make_plan(memories, profile, NOW, store_format="longterm")
            settings = LlmSettings(url=server.url, model="bench", concurrency=concurrency)
            client = LlmClient(settings, MemoryCache())
            better = asyncio.run(improve_plan(plan, memories, profile, client, ["merge"], NOW))
            seconds = time.perf_counter() - start
            worded = sum(1 for a in better.actions if a.actor == "llm")
            print(
                f"  concurrency {concurrency}: {seconds:6.2f} s for {client.calls} calls "
                f"({worded} merges worded by the model)"
            )
    finally:
        server.close()


if __name__ == "__main__":
    main()
