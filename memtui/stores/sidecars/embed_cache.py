"""Sentence embeddings kept beside the store (`<store>.memtui/embeddings/<model>.npz`), keyed
by the sha256 of each text: planning again embeds only texts not seen before.

One file per model: `keys` (the 32-byte digests, uint8 rows) and `vectors` (float32, one row
per key), rewritten atomically when new texts were embedded. A damaged file is ignored (the
texts are embedded again and the file replaced); it never stops a plan.
"""

from __future__ import annotations

import hashlib
import io
import re
import zipfile
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from memtui.stores.file.files import atomic_write


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class EmbeddingCache:
    def __init__(self, folder: Path, model: str) -> None:
        self.path = folder / (re.sub(r"[^A-Za-z0-9._-]+", "_", model) + ".npz")
        self._vectors: dict[bytes, np.ndarray] | None = None
        self._dirty = False

    def _load(self) -> dict[bytes, np.ndarray]:
        if self._vectors is None:
            self._vectors = {}
            try:
                with np.load(self.path, allow_pickle=False) as data:
                    keys, vectors = data["keys"], data["vectors"]
                if keys.ndim == 2 and keys.shape[1] == 32 and len(keys) == len(vectors):
                    self._vectors = {k.tobytes(): v for k, v in zip(keys, vectors, strict=True)}
            except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
                pass  # missing or damaged: embed again
        return self._vectors

    def get(self, text: str) -> np.ndarray | None:
        return self._load().get(text_key(text))

    def put(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        vectors = self._load()
        for text, vector in items:
            vectors[text_key(text)] = np.asarray(vector, dtype=np.float32)
            self._dirty = True

    def save(self) -> None:
        """Write the file if anything was added (atomically: a crash leaves the old one)."""
        if not self._dirty or self._vectors is None:
            return
        dims = {v.shape for v in self._vectors.values()}
        if len(dims) > 1:  # a model changed its size under the same name: keep the newest
            newest = next(reversed(self._vectors.values())).shape
            self._vectors = {k: v for k, v in self._vectors.items() if v.shape == newest}
        buffer = io.BytesIO()
        keys = np.frombuffer(b"".join(self._vectors), dtype=np.uint8).reshape(-1, 32)
        rows = np.stack(list(self._vectors.values())) if self._vectors else np.zeros((0, 0))
        np.savez(buffer, keys=keys, vectors=rows.astype(np.float32))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, buffer.getvalue())
        self._dirty = False
