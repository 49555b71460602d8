"""Sentence embeddings combined with memtui's lexical score (the `memtui` method with
`memtui[embed]`). Pure: the vectors come in computed (memtui/embedding.py, cached beside the
store); this module only compares them.

The combined score of two entries is max(lexical, rescaled embedding cosine), the cosine
rescaled so that `EMBED_FLOOR` maps to 0 and 1 to 1: with the merge line at 0.55, a pair
merges on its words (lexical ≥ 0.55) or on its meaning (cosine ≥ 0.7975). Chosen on the
labelled set's dev split: a floor of 0.55 gave the best grouping F1 at precision ≥ 0.8 (0.60,
bench/quality_bench.py --embed-sweep); weighted means of the two scores, tried the same way
while choosing, reached 0.57 at best. Pairs with a cosine ≥ 0.955 reach the absorb line 0.9:
restatements ("I am a vegan." / "I am vegan.") are absorbed as duplicates.

Each entry has at most one vector, in one space: the record's own `embedding` when it carries
one (Go records; the space is its length), else the model's. Only entries of one space are
compared; any other pair is scored on its words alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from memtui.model import Memory

EMBED_FLOOR = 0.55
_BLOCK = 512
# block products are float32 (half the time of float64); they keep pairs this close below the
# line (far above float32 rounding in a dot product of unit vectors) for exact
# re-scoring in float64
_MARGIN = 1e-3


@dataclass(frozen=True, slots=True)
class Embeddings:
    """The model's vectors of some entries, by memory id (computed outside the engine)."""

    model: str
    vectors: Mapping[str, np.ndarray]


def rescaled(cosine: float) -> float:
    """A cosine on the lexical scale: EMBED_FLOOR → 0, 1 → 1, below the floor 0."""
    return max(0.0, min(1.0, (cosine - EMBED_FLOOR) / (1.0 - EMBED_FLOOR)))


def cosine_line(threshold: float) -> float:
    """The cosine whose rescaled value is `threshold`."""
    return EMBED_FLOOR + threshold * (1.0 - EMBED_FLOOR)


def _unit(vector: Sequence[float] | np.ndarray) -> np.ndarray | None:
    v = np.asarray(vector, dtype=np.float64)
    if v.ndim != 1 or not v.size or not np.all(np.isfinite(v)):
        return None
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else None


def entry_vectors(
    memories: Sequence[Memory], embeddings: Embeddings
) -> list[tuple[str, np.ndarray] | None]:
    """Each entry's (space, unit vector): its own embedding, else the model's, else None."""
    out: list[tuple[str, np.ndarray] | None] = []
    for m in memories:
        if m.embedding:
            own = _unit(m.embedding)
            out.append((f"record:{len(m.embedding)}", own) if own is not None else None)
            continue
        given = embeddings.vectors.get(m.id)
        unit = _unit(given) if given is not None else None
        out.append((f"model:{embeddings.model}:{unit.size}", unit) if unit is not None else None)
    return out


def reference_cosine(
    a: tuple[str, np.ndarray] | None, b: tuple[str, np.ndarray] | None
) -> float | None:
    """The cosine of two entries' vectors (None: not comparable), clamped to [0, 1]."""
    if a is None or b is None or a[0] != b[0]:
        return None
    return max(0.0, min(1.0, float(np.dot(a[1], b[1]))))


def combined(lexical: float, cosine: float | None) -> float:
    return lexical if cosine is None else max(lexical, rescaled(cosine))


def cosine_pairs(
    vectors: Sequence[tuple[str, np.ndarray] | None], threshold: float
) -> dict[tuple[int, int], float]:
    """Every pair (x < y) of one space whose rescaled reference cosine is ≥ threshold:
    unit vectors multiplied in float32 blocks, the ones near the line re-scored one by one.
    Each pair's reference cosine, by (x, y)."""
    line = cosine_line(threshold)
    spaces: dict[str, list[int]] = {}
    for i, v in enumerate(vectors):
        if v is not None:
            spaces.setdefault(v[0], []).append(i)
    out = {}
    for members in spaces.values():
        if len(members) < 2:
            continue
        matrix = np.stack([vectors[i][1] for i in members]).astype(np.float32)  # type: ignore[index]
        for start in range(0, len(members), _BLOCK):
            block = matrix[start : start + _BLOCK] @ matrix[start:].T
            rows, cols = np.nonzero(block >= line - _MARGIN)
            for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
                x, y = start + r, start + c
                if y <= x:
                    continue
                i, j = members[x], members[y]
                score = reference_cosine(vectors[i], vectors[j])
                if score is not None and rescaled(score) >= threshold:
                    out[(i, j)] = score
    return out


def cosine_matrix(vectors: Sequence[tuple[str, np.ndarray] | None]) -> np.ndarray:
    """All rescaled cosines among some entries (0 across spaces), for the linkage."""
    n = len(vectors)
    out = np.zeros((n, n))
    spaces: dict[str, list[int]] = {}
    for i, v in enumerate(vectors):
        if v is not None:
            spaces.setdefault(v[0], []).append(i)
    for members in spaces.values():
        matrix = np.stack([vectors[i][1] for i in members])  # type: ignore[index]
        sims = np.clip((matrix @ matrix.T - EMBED_FLOOR) / (1.0 - EMBED_FLOOR), 0.0, 1.0)
        out[np.ix_(members, members)] = sims
    return out
