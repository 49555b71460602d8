"""A person's labels for a store: "these entries are the same memory" (or not), kept beside the
store in `<store>.memtui/labels.jsonl`, never in it. Each label keeps the texts it was given on,
so it still counts after the entries are merged or edited; the newest label of a pair wins."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import combinations
from pathlib import Path
from typing import Any

import orjson

from memtui.errors import MemtuiError, StoreFormatError
from memtui.model import Memory
from memtui.stores.file.files import atomic_write, read_bytes
from memtui.times import format_iso, parse_iso


@dataclass(frozen=True, slots=True)
class Label:
    ids: tuple[str, ...]
    """Two entries (a pair) or more (a group), sorted."""
    texts: tuple[str, ...]
    same: bool
    """True: one memory (every pair in it); False: not one memory."""
    at: datetime

    @property
    def key(self) -> tuple[str, ...]:
        return self.ids

    def pairs(self) -> list[tuple[str, str, bool]]:
        """The pairs this label decides: every pair of a group labelled the same memory; a
        pair labelled different. A group labelled "not one memory" decides no single pair."""
        if self.same:
            return [(a, b, True) for a, b in combinations(self.ids, 2)]
        if len(self.ids) == 2:
            return [(self.ids[0], self.ids[1], False)]
        return []

    def to_dict(self) -> dict[str, Any]:
        return {
            "ids": list(self.ids),
            "texts": list(self.texts),
            "same": self.same,
            "at": format_iso(self.at),
        }

    @classmethod
    def from_dict(cls, raw: Any) -> Label:
        ids, texts, same, at = raw["ids"], raw["texts"], raw["same"], parse_iso(raw["at"])
        if (
            not isinstance(ids, list)
            or len(ids) < 2
            or not all(isinstance(i, str) for i in ids)
            or not isinstance(texts, list)
            or len(texts) != len(ids)
            or not all(isinstance(t, str) for t in texts)
            or not isinstance(same, bool)
            or at is None
        ):
            raise ValueError("not a label")
        return cls(tuple(ids), tuple(texts), same, at)


def make_label(members: Sequence[Memory], same: bool, at: datetime) -> Label:
    if len({m.id for m in members}) < 2:
        raise MemtuiError("a label needs two or more different entries")
    ordered = sorted(members, key=lambda m: m.id)
    return Label(tuple(m.id for m in ordered), tuple(m.content for m in ordered), same, at)


class LabelFile:
    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> list[Label]:
        """The labels, the newest per pair or group (a damaged line is a one-line error)."""
        try:
            data = read_bytes(self.path)
        except StoreFormatError:
            if not self.path.exists():
                return []
            raise
        latest: dict[tuple[str, ...], Label] = {}
        for number, line in enumerate(data.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                label = Label.from_dict(orjson.loads(line))
            except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
                raise StoreFormatError(
                    f"{self.path}: line {number} is not a label; fix or remove it"
                ) from None
            latest[label.key] = label
        return list(latest.values())

    def add(self, labels: Iterable[Label]) -> None:
        """Append labels (the file is rewritten atomically: it stays small)."""
        new = b"".join(orjson.dumps(label.to_dict()) + b"\n" for label in labels)
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        existing = read_bytes(self.path) if self.path.exists() else b""
        if existing and not existing.endswith(b"\n"):
            existing += b"\n"
        atomic_write(self.path, existing + new, mode=0o600)
