"""What a store's labels say about each method's merge threshold (`memtui calibrate`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memtui.engine.calibration import (
    DEFAULT_TARGET_PRECISION,
    EMBED_METHOD,
    MethodCalibration,
    calibrate,
    labels_shortfall,
    score_embedded_pairs,
    score_text_pairs,
)
from memtui.engine.similarity import METHODS
from memtui.errors import MemtuiError
from memtui.service.base import Part, Shared, embeddings_folder
from memtui.service.labels import Labels, decided_pairs
from memtui.stores.protocol import MemoryStore

# what `calibrate` can measure: every method, and `memtui` with local embeddings (the extra)
CALIBRATION_METHODS = (*METHODS, EMBED_METHOD)


class CalibrationPart(Part):
    """Precision and recall per threshold from the labels."""

    def __init__(self, shared: Shared, labels: Labels) -> None:
        super().__init__(shared)
        self.labels = labels

    def calibration_shortfall(self, store: MemoryStore) -> str | None:
        """What labels are still missing before a calibration curve means something (one
        line), or None when there are enough."""
        return labels_shortfall(*self.labels.label_counts(store))

    def calibrate(
        self,
        store: MemoryStore,
        methods: Sequence[str] | None = None,
        target_precision: float = DEFAULT_TARGET_PRECISION,
    ) -> Calibration:
        """Precision, recall and F1 per threshold for each method from the store's labels."""
        if not 0.0 < target_precision <= 1.0:
            raise MemtuiError(f"the precision target must be in (0, 1], got {target_precision}")
        labels = self.labels.labels(store)
        texts = {i: t for label in labels for i, t in zip(label.ids, label.texts, strict=True)}
        decided = decided_pairs(labels)
        if not decided:
            raise MemtuiError(
                f"{store.path}: no labelled pairs yet; label some with `memtui label` "
                "(or y/n in the clusters view)"
            )
        pairs = [(texts[a], texts[b]) for a, b in decided]
        verdicts = list(decided.values())
        results = []
        for method in methods or METHODS:
            if method == EMBED_METHOD:
                scores = self._embedded_pair_scores(store, pairs)
            elif method in METHODS:
                scores = score_text_pairs(pairs, method)
            else:
                known = ", ".join(CALIBRATION_METHODS)
                raise MemtuiError(f"unknown method {method!r} (use {known})")
            scored = list(zip(scores, verdicts, strict=True))
            results.append(calibrate(method, scored, target_precision))
        return Calibration(
            str(store.path),
            self.labels.profiles.profile(store).name,
            len(verdicts),
            sum(verdicts),
            target_precision,
            results,
        )

    def _embedded_pair_scores(
        self, store: MemoryStore, pairs: Sequence[tuple[str, str]]
    ) -> list[float]:
        """The `memtui+embed` score of labelled text pairs (vectors cached beside the store)."""
        from memtui.embedding import EmbeddingsUnavailable, cached_embeddings, load_embedder

        try:
            embedder = load_embedder()
        except EmbeddingsUnavailable as e:
            raise MemtuiError(str(e)) from None
        texts = sorted({t for pair in pairs for t in pair})
        rows = cached_embeddings(embedder, texts, embeddings_folder(store))
        return score_embedded_pairs(pairs, dict(zip(texts, rows, strict=True)), embedder.name)


@dataclass(frozen=True, slots=True)
class Calibration:
    """What a store's labels say about each method's thresholds (`memtui calibrate`)."""

    store: str
    profile: str
    pairs: int
    positives: int
    target_precision: float
    methods: list[MethodCalibration]

    @property
    def shortfall(self) -> str | None:
        """Why there is no recommendation yet: too few labels for a curve to mean something."""
        return labels_shortfall(self.pairs, self.positives)

    @property
    def best(self) -> MethodCalibration | None:
        if self.shortfall is not None:
            return None
        fit = [m for m in self.methods if m.recommended is not None]
        return max(fit, key=lambda m: m.recommended.f1 if m.recommended else 0.0, default=None)

    def config_lines(self) -> str | None:
        best = self.best
        if best is None or best.recommended is None:
            return None
        # memtui+embed is the memtui method planned with `--embed`
        embed = best.method == EMBED_METHOD
        lines = (
            f'[profiles.{self.profile}]\nmethod = "{"memtui" if embed else best.method}"\n'
            f"merge_threshold = {best.recommended.threshold:g}"
        )
        return lines + ("\n# plan with --embed to use embeddings" if embed else "")

    def to_dict(self) -> dict[str, Any]:
        best = self.best
        return {
            "store": self.store,
            "profile": self.profile,
            "labels": {
                "pairs": self.pairs,
                "same": self.positives,
                "different": self.pairs - self.positives,
            },
            "target_precision": self.target_precision,
            "shortfall": self.shortfall,
            "methods": [m.to_dict() for m in self.methods],
            "recommendation": None
            if best is None or best.recommended is None
            else {
                "method": best.method,
                "threshold": best.recommended.threshold,
                "config": self.config_lines(),
            },
        }
