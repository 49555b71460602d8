"""How far to trust a threshold on one store's data: precision, recall and F1 per threshold from
a person's labels ("these two entries are the same memory" or not), and the threshold to use.

Pure: scores come in already computed (see `memtui.service`), nothing is read or written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_TARGET_PRECISION = 0.8
MIN_PAIRS = 30  # fewer labelled pairs than this make a curve that says little
MIN_EACH = 10  # of each verdict: without both, precision or recall cannot be read
THRESHOLDS = tuple(round(0.05 * n, 2) for n in range(1, 20))  # 0.05 … 0.95


@dataclass(frozen=True, slots=True)
class CurvePoint:
    threshold: float
    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        """Of the pairs at or above the threshold, the share people call the same memory (1.0
        when nothing is proposed: proposing nothing is never wrong)."""
        proposed = self.tp + self.fp
        return self.tp / proposed if proposed else 1.0

    @property
    def recall(self) -> float:
        positives = self.tp + self.fn
        return self.tp / positives if positives else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def to_dict(self) -> dict[str, float | int]:
        return {
            "threshold": self.threshold,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
        }


@dataclass(frozen=True, slots=True)
class MethodCalibration:
    method: str
    curve: list[CurvePoint]
    recommended: CurvePoint | None
    """The threshold with the best F1 among those at the target precision; None when no
    threshold reaches it."""

    def to_dict(self) -> dict[str, object]:
        return {
            "method": self.method,
            "curve": [p.to_dict() for p in self.curve],
            "recommended": self.recommended.to_dict() if self.recommended else None,
        }


def curve(
    scored: Sequence[tuple[float, bool]], thresholds: Sequence[float] = THRESHOLDS
) -> list[CurvePoint]:
    """Counts at each threshold for (score, same memory) pairs; a pair is proposed at a
    threshold when its score is at or above it."""
    points = []
    for t in thresholds:
        tp = sum(1 for s, same in scored if same and s >= t)
        fp = sum(1 for s, same in scored if not same and s >= t)
        fn = sum(1 for s, same in scored if same and s < t)
        points.append(CurvePoint(t, tp, fp, fn))
    return points


def recommend(points: Sequence[CurvePoint], target_precision: float) -> CurvePoint | None:
    """Best F1 at or above the target precision (ties: the lower threshold, which finds more)."""
    fit = [p for p in points if p.tp and p.precision >= target_precision]
    if not fit:
        return None
    return max(fit, key=lambda p: (round(p.f1, 9), -p.threshold))


def calibrate(
    method: str, scored: Sequence[tuple[float, bool]], target_precision: float
) -> MethodCalibration:
    points = curve(scored)
    return MethodCalibration(method, points, recommend(points, target_precision))


def score_text_pairs(pairs: Sequence[tuple[str, str]], method: str) -> list[float]:
    """Each pair's similarity under `method`."""
    from memtui.engine.similarity import text_similarity

    return [text_similarity(a, b, method) for a, b in pairs]


EMBED_METHOD = "memtui+embed"
"""The `memtui` method with local sentence embeddings (engine/embedded.py): calibrated like the
others, its vectors computed by the caller."""


def score_embedded_pairs(
    pairs: Sequence[tuple[str, str]], vectors: Mapping[str, np.ndarray], model: str
) -> list[float]:
    """Each pair's `memtui+embed` score: its `memtui` score combined with the cosine of the two
    texts' vectors (`vectors` by text; a text without one is scored on its words)."""
    from memtui.engine.embedded import Embeddings, combined, entry_vectors, reference_cosine
    from memtui.model import Memory

    lexical = score_text_pairs(pairs, "memtui")
    embeddings = Embeddings(model, vectors)
    out = []
    for (a, b), words in zip(pairs, lexical, strict=True):
        va, vb = entry_vectors([Memory(id=a, content=a), Memory(id=b, content=b)], embeddings)
        out.append(combined(words, reference_cosine(va, vb)))
    return out


def labels_shortfall(pairs: int, positives: int) -> str | None:
    """How many more labels a curve needs to mean something (one line), or None."""
    negatives = pairs - positives
    more_each = max(0, MIN_EACH - positives) + max(0, MIN_EACH - negatives)
    more = max(MIN_PAIRS - pairs, more_each)
    if more <= 0:
        return None
    return (
        f"{more} more labelled pair{'s' if more != 1 else ''} needed for a curve worth reading: "
        f"it takes {MIN_PAIRS}, at least {MIN_EACH} the same memory and {MIN_EACH} not "
        f"(now {pairs}: {positives} the same, {negatives} not)"
    )
