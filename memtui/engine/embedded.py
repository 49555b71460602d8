"""Sentence embeddings combined with memtui's lexical score (the `memtui` method with
`memtui[embed]`). Pure: the vectors come in computed (memtui/embedding.py, cached beside the
store); this module only compares them.

The combined score of two entries is max(lexical, rescaled embedding cosine), the cosine
rescaled so that the floor maps to 0 and 1 to 1: with the merge line at 0.55, a pair merges on
its words (lexical ≥ 0.55) or on its meaning (cosine ≥ 0.7975 in English). Pairs with a cosine
≥ 0.955 reach the absorb line 0.9: restatements ("I am a vegan." / "I am vegan.") are absorbed
as duplicates.

The floor is per language (bench/quality_bench.py --embed-sweep, chosen on the labelled set's
dev split, precision ≥ 0.8 in each language): `EMBED_FLOOR` 0.55 in general, the best grouping
F1; `EMBED_FLOOR_CJK` 0.95 for two texts mostly in CJK script. The multilingual model does not
tell Chinese restatements from same-topic facts (dev: at the general floor one more Chinese
pair found and one wrong; every floor from 0.65 up the same one right pair, so ties go to the
fewest PAWS-X false merges), while it scores Chinese sentences of the same words in another
order as the same (PAWS-X non-paraphrases merged: 0.882 at 0.55, 0.608 at 0.95, 0.590 on
words alone): for Chinese it only confirms near-duplicates (cosine ≥ 0.98). Measured and not
taken: a lexical-support gate (`LEXICAL_SUPPORT`: the meaning counts only when the words reach
it) and a partial lift (`MEANING_SHARE`: lexical + share · (meaning − lexical)+); neither beat
the max on dev.

Each entry has at most one vector, in one space: the record's own `embedding` when it carries
one (Go records; the space is its length), else the model's. Only entries of one space are
compared; any other pair is scored on its words alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from memtui.engine.lexical import mostly_cjk
from memtui.engine.matrix_pairs import rows_at_least
from memtui.model import Memory

EMBED_FLOOR = 0.55
EMBED_FLOOR_CJK = 0.95
_CJK_TAG = "+cjk"
# 0 and 1: the plain max (the measured alternatives are kept so the bench can re-measure them)
LEXICAL_SUPPORT = 0.0
MEANING_SHARE = 1.0
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
    """Each entry's (space, unit vector): its own embedding, else the model's, else None. The
    model's space ends in `_CJK_TAG` for a text mostly in CJK script."""
    out: list[tuple[str, np.ndarray] | None] = []
    for m in memories:
        if m.embedding:
            own = _unit(m.embedding)
            out.append((f"record:{len(m.embedding)}", own) if own is not None else None)
            continue
        given = embeddings.vectors.get(m.id)
        unit = _unit(given) if given is not None else None
        if unit is None:
            out.append(None)
            continue
        tag = _CJK_TAG if mostly_cjk(m.content) else ""
        out.append((f"model:{embeddings.model}:{unit.size}{tag}", unit))
    return out


def _space(entry: tuple[str, np.ndarray]) -> str:
    return entry[0].removesuffix(_CJK_TAG)


def _floor(a: tuple[str, np.ndarray], b: tuple[str, np.ndarray]) -> float:
    both_cjk = a[0].endswith(_CJK_TAG) and b[0].endswith(_CJK_TAG)
    return EMBED_FLOOR_CJK if both_cjk else EMBED_FLOOR


def reference_cosine(
    a: tuple[str, np.ndarray] | None, b: tuple[str, np.ndarray] | None
) -> float | None:
    """The cosine of two entries' vectors (None: not comparable), clamped to [0, 1]; for two
    CJK texts mapped linearly so that EMBED_FLOOR_CJK lands on EMBED_FLOOR (one scale)."""
    if a is None or b is None or _space(a) != _space(b):
        return None
    cosine = float(np.dot(a[1], b[1]))
    floor = _floor(a, b)
    if floor != EMBED_FLOOR:
        cosine = EMBED_FLOOR + (cosine - floor) * (1.0 - EMBED_FLOOR) / (1.0 - floor)
    return max(0.0, min(1.0, cosine))


def combined(lexical: float, cosine: float | None) -> float:
    """The pair's score from its words and (when comparable) its meaning; never above
    max(lexical, rescaled(cosine)), so the searches for either part find every pair."""
    if cosine is None or lexical < LEXICAL_SUPPORT:
        return lexical
    return lexical + MEANING_SHARE * max(0.0, rescaled(cosine) - lexical)


def combined_matrix(
    lexical: np.ndarray, vectors: Sequence[tuple[str, np.ndarray] | None]
) -> np.ndarray:
    """`combined` over all pairs of some entries at once (for the linkage); `lexical` is
    their lexical score matrix."""
    meaning, comparable = _rescaled_matrix(vectors)
    lifted = lexical + MEANING_SHARE * np.maximum(0.0, meaning - lexical)
    return np.where(comparable & (lexical >= LEXICAL_SUPPORT), lifted, lexical)


def cosine_pairs(
    vectors: Sequence[tuple[str, np.ndarray] | None], threshold: float
) -> dict[tuple[int, int], float]:
    """Every pair (x < y) of one space whose rescaled reference cosine is ≥ threshold:
    unit vectors multiplied in float32 blocks, the ones near the lowest line re-scored one by
    one. Each pair's reference cosine, by (x, y)."""
    line = min(floor + threshold * (1.0 - floor) for floor in (EMBED_FLOOR, EMBED_FLOOR_CJK))
    spaces: dict[str, list[int]] = {}
    for i, v in enumerate(vectors):
        if v is not None:
            spaces.setdefault(_space(v), []).append(i)
    out = {}
    for members in spaces.values():
        if len(members) < 2:
            continue
        matrix = np.stack([vectors[i][1] for i in members]).astype(np.float32)  # type: ignore[index]
        for x, y in rows_at_least(matrix, line - _MARGIN):
            i, j = members[x], members[y]
            score = reference_cosine(vectors[i], vectors[j])
            if score is not None and rescaled(score) >= threshold:
                out[(i, j)] = score
    return out


def _rescaled_matrix(
    vectors: Sequence[tuple[str, np.ndarray] | None],
) -> tuple[np.ndarray, np.ndarray]:
    """(rescaled cosines, comparable?) of every pair of some entries."""
    cosines, comparable, both_cjk = _raw(vectors)
    floor = np.where(both_cjk, EMBED_FLOOR_CJK, EMBED_FLOOR)
    rescaled = np.clip((cosines - floor) / (1.0 - floor), 0.0, 1.0)
    return np.where(comparable, rescaled, 0.0), comparable


# -- the subject tier (engine/subject_tier.py) ------------------------------------------------


@dataclass(frozen=True, slots=True)
class SubjectScale:
    """How the subject tier reads a cosine: `cosine` (`cosine_cjk` for two CJK texts) lands on
    its `line`, 1 on 1, linearly; the pair's score is max(lexical, that)."""

    line: float
    cosine: float
    cosine_cjk: float

    def floor(self, cjk: bool) -> float:
        return self.cosine_cjk if cjk else self.cosine


def _raw(
    vectors: Sequence[tuple[str, np.ndarray] | None],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cosines, comparable?, both CJK?) of every pair of some entries."""
    n = len(vectors)
    cosines = np.zeros((n, n))
    comparable = np.zeros((n, n), dtype=bool)
    both_cjk = np.zeros((n, n), dtype=bool)
    spaces: dict[str, list[int]] = {}
    for i, v in enumerate(vectors):
        if v is not None:
            spaces.setdefault(_space(v), []).append(i)
    for members in spaces.values():
        entries = [vectors[i] for i in members]
        matrix = np.stack([e[1] for e in entries])  # type: ignore[index]
        cjk = np.array([e[0].endswith(_CJK_TAG) for e in entries])  # type: ignore[index]
        cell = np.ix_(members, members)
        cosines[cell] = matrix @ matrix.T
        comparable[cell] = True
        both_cjk[cell] = np.outer(cjk, cjk)
    return cosines, comparable, both_cjk


def subject_matrix(
    lexical: np.ndarray, vectors: Sequence[tuple[str, np.ndarray] | None], scale: SubjectScale
) -> np.ndarray:
    """The subject tier's scores of some entries: max(lexical, the scaled cosine)."""
    cosines, comparable, both_cjk = _raw(vectors)
    floor = np.where(both_cjk, scale.cosine_cjk, scale.cosine)
    lifted = scale.line + (cosines - floor) * (1.0 - scale.line) / (1.0 - floor)
    lifted = np.clip(lifted, 0.0, 1.0)
    return np.where(comparable, np.maximum(lexical, lifted), lexical)


def subject_pairs(
    vectors: Sequence[tuple[str, np.ndarray] | None], scale: SubjectScale
) -> list[tuple[int, int, float]]:
    """Every pair (x < y) of one space whose cosine reaches the subject tier's line, with its
    scaled cosine."""
    low = min(scale.cosine, scale.cosine_cjk)
    spaces: dict[str, list[int]] = {}
    for i, v in enumerate(vectors):
        if v is not None:
            spaces.setdefault(_space(v), []).append(i)
    out = []
    for members in spaces.values():
        if len(members) < 2:
            continue
        entries = [vectors[i] for i in members]
        matrix = np.stack([e[1] for e in entries]).astype(np.float32)  # type: ignore[index]
        for x, y in rows_at_least(matrix, low - _MARGIN):
            a, b = entries[x], entries[y]
            assert a is not None and b is not None
            floor = scale.floor(a[0].endswith(_CJK_TAG) and b[0].endswith(_CJK_TAG))
            cosine = float(np.dot(a[1], b[1]))
            if cosine >= floor:
                lifted = scale.line + (cosine - floor) * (1.0 - scale.line) / (1.0 - floor)
                out.append((members[x], members[y], min(1.0, lifted)))
    return out
