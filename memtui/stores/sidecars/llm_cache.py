"""The model answers memtui has already paid for, on disk: one small JSON file per request
hash in the data folder. Requests hold the prompt, never the API key."""

from __future__ import annotations

import contextlib
from pathlib import Path

import orjson

from memtui.stores.file.files import atomic_write


class FileCache:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> str | None:
        try:
            content = orjson.loads(self._path(key).read_bytes()).get("content")
        except (OSError, orjson.JSONDecodeError, AttributeError):
            return None
        return content if isinstance(content, str) else None

    def put(self, key: str, content: str) -> None:
        path = self._path(key)
        with contextlib.suppress(OSError):  # a cache that cannot be written only costs money
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, orjson.dumps({"content": content}), mode=0o600)
