"""The straightforward way, for comparison: score every pair of entries of each user.

    python bench/allpairs_reference.py pairs STORE METHOD THRESHOLD   → JSON like `memtui pairs`
    python bench/allpairs_reference.py pi-clusters STORE NOW          → pi's merge clusters

Per-entry features (normalised text, 2-gram sets, term vectors) are computed once, so this is a
fair all-pairs baseline, not a strawman.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memtui.engine.similarity import pi_grams, pi_normalise, tf_cosine_vectors, tf_vector
from memtui.model import Status
from memtui.stores import open_store
from memtui.times import parse_iso


def pi_score(na: str, nb: str, ga: frozenset[int], gb: frozenset[int]) -> float:
    if na == nb:
        return 1.0 if na else 0.0
    if not na or not nb:
        return 0.0
    short, long = (
        (na, nb) if len(na.encode("utf-16-le")) <= len(nb.encode("utf-16-le")) else (nb, na)
    )
    if len(short.encode("utf-16-le")) >= 12 and short in long:
        return 1.0
    return len(ga & gb) / min(len(ga), len(gb))


def all_pairs(memories, method: str, threshold: float):  # type: ignore[no-untyped-def]
    groups = defaultdict(list)
    for i, m in enumerate(memories):
        groups[m.user_id].append(i)
    if method == "pi":
        norm = [pi_normalise(m.content) for m in memories]
        grams = [pi_grams(n) for n in norm]

        def score(i: int, j: int) -> float:
            return pi_score(norm[i], norm[j], grams[i], grams[j])
    else:
        vectors = [tf_vector(m.content) for m in memories]

        def score(i: int, j: int) -> float:
            return tf_cosine_vectors(vectors[i], vectors[j])

    found = []
    for members in groups.values():
        for x, i in enumerate(members):
            for j in members[x + 1 :]:
                s = score(i, j)
                if s >= threshold:
                    found.append((i, j, s))
    found.sort(key=lambda t: (-t[2], t[0], t[1]))
    return found


def main() -> None:
    what, path = sys.argv[1], sys.argv[2]
    memories = [m for m in open_store(path).memories() if m.status is Status.ACTIVE]
    if what == "pairs":
        found = all_pairs(memories, sys.argv[3], float(sys.argv[4]))
        json.dump(
            [{"a": memories[i].id, "b": memories[j].id, "score": s} for i, j, s in found],
            sys.stdout,
        )
        return
    now = parse_iso(sys.argv[3])
    assert now is not None

    def potency(m):  # type: ignore[no-untyped-def]
        if m.tenured or m.last_decayed_at is None:
            return m.importance
        return m.importance * 0.95 ** ((now - m.last_decayed_at).total_seconds() / 86400)

    candidates = [m for m in memories if (m.tenured or potency(m) >= 0.3) and m.source != "user"]
    parent = {m.id: m.id for m in candidates}

    def find(x: str) -> str:
        while parent[x] != x:
            x = parent[x]
        return x

    for i, j, _ in all_pairs(candidates, "pi", 0.3):
        parent[find(candidates[i].id)] = find(candidates[j].id)
    groups = defaultdict(list)
    for m in candidates:
        groups[find(m.id)].append(m.id)
    json.dump(sorted(sorted(g) for g in groups.values() if 2 <= len(g) <= 8), sys.stdout)


if __name__ == "__main__":
    main()
