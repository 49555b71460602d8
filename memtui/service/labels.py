"""A person's verdicts on pairs of entries (one memory or not), kept beside the store, and the
pairs most worth a verdict."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

from memtui.engine.grouping import active_pairs
from memtui.engine.similarity import METHODS, text_similarity
from memtui.errors import MemtuiError
from memtui.model import Memory
from memtui.service.base import History, Part, Shared, record_of, side_folder
from memtui.service.profiles import Profiles
from memtui.stores.file.files import atomic_write, read_bytes
from memtui.stores.protocol import MemoryStore
from memtui.stores.sidecars.labels import Label, LabelFile, make_label

LABEL_BAND = 0.2  # how far from the merge line a pair is worth labelling


class Labels(Part):
    """Labelling pairs, taking labels back, exporting them."""

    def __init__(self, shared: Shared, profiles: Profiles) -> None:
        super().__init__(shared)
        self.profiles = profiles

    def _labels_file(self, store: MemoryStore) -> LabelFile:
        return LabelFile(side_folder(store) / "labels.jsonl")

    def labels(self, store: MemoryStore) -> list[Label]:
        return self._labels_file(store).read()

    def export_labels(self, labels: Sequence[Label], dest: Path) -> None:
        if dest.exists():
            raise MemtuiError(f"{dest}: exists; not overwriting it")
        if not dest.parent.is_dir():
            raise MemtuiError(f"{dest}: its folder does not exist; nothing was exported")
        LabelFile(dest).add(labels)

    def label(self, store: MemoryStore, ids: Sequence[str], same: bool) -> Label:
        """Record that these entries are (or are not) one memory; kept beside the store."""
        return self.label_groups(store, [ids], same)[0]

    def label_groups(
        self, store: MemoryStore, groups: Sequence[Sequence[str]], same: bool
    ) -> list[Label]:
        """`label` for each group, in one write (every pair of a cluster, say); nothing is
        recorded when an id is unknown."""
        history = History.of(store)
        labels = []
        for ids in groups:
            members = []
            for ident in ids:
                found = record_of(store, ident, history)
                if found is None:
                    store.get(ident)  # the one-line "no memory with id" error
                else:
                    members.append(found)
            labels.append(make_label(members, same, self.shared.now()))
        self._labels_file(store).add(labels)
        return labels

    def unlabel(self, store: MemoryStore, label: Label) -> bool:
        """Take back `label` (the newest line that holds it); an earlier verdict on the same
        entries counts again. False when the file no longer holds it."""
        path = self._labels_file(store).path
        if not path.exists():
            return False
        lines = read_bytes(path).splitlines(keepends=True)
        wanted = label.to_dict()
        for n in range(len(lines) - 1, -1, -1):
            try:
                found = orjson.loads(lines[n]) == wanted
            except orjson.JSONDecodeError:
                found = False
            if found:
                del lines[n]
                atomic_write(path, b"".join(lines), mode=0o600)
                return True
        return False

    def label_counts(self, store: MemoryStore) -> tuple[int, int]:
        """How many pairs the store's labels decide, and how many of them are one memory."""
        decided = decided_pairs(self.labels(store))
        return len(decided), sum(decided.values())

    def pairs_to_label(
        self, store: MemoryStore, limit: int = 200, *, band: float = LABEL_BAND
    ) -> list[LabelPair]:
        """Pairs worth a person's verdict: live entries of one user, not yet labelled, scoring
        within `band` of the profile's merge line under its method (where a verdict moves the
        threshold most). Alternately above and below the line, nearest first; no entry in two
        pairs one after the other where another pair can go between. Deterministic."""
        profile = self.profiles.profile(store)
        method = profile.method
        line = profile.merge_threshold or 0.8
        decided = decided_pairs(self.labels(store))
        low, high = max(0.01, line - band), min(1.0, line + band)
        above: list[tuple[float, str, str, float]] = []
        below: list[tuple[float, str, str, float]] = []
        active, pairs = active_pairs(store.memories(), method, low)
        by_id = {m.id: m for m in active}
        for p in pairs:
            a, b = sorted((p.a, p.b))
            if p.score > high or (a, b) in decided or by_id[a].user_id != by_id[b].user_id:
                continue
            side = above if p.score >= line else below
            side.append((abs(p.score - line), a, b, p.score))
        above.sort()
        below.sort()
        chosen: list[tuple[str, str, float]] = []
        sides = (above, below)
        turn = 0
        while (above or below) and len(chosen) < limit:
            last = set(chosen[-1][:2]) if chosen else set()
            order = [sides[turn], sides[1 - turn]]
            picked = _first_apart(order, last)
            _, a, b, score = picked
            chosen.append((a, b, score))
            turn = 0 if score < line else 1
        return [
            LabelPair(
                by_id[a],
                by_id[b],
                method,
                line,
                {
                    m: score
                    if m == method
                    else text_similarity(by_id[a].content, by_id[b].content, m)
                    for m in METHODS
                },
            )
            for a, b, score in chosen
        ]


@dataclass(frozen=True, slots=True)
class LabelPair:
    """Two live entries to label, with the score of each method (`method` is the profile's,
    `line` its merge line)."""

    a: Memory
    b: Memory
    method: str
    line: float
    scores: dict[str, float]

    @property
    def score(self) -> float:
        return self.scores[self.method]


def decided_pairs(labels: Sequence[Label]) -> dict[tuple[str, str], bool]:
    """Each labelled pair's verdict (ids sorted), the newest label winning."""
    decided: dict[tuple[str, str], bool] = {}
    for label in sorted(labels, key=lambda lb: lb.at):
        for a, b, same in label.pairs():
            decided[(a, b)] = same
    return decided


def _first_apart(
    queues: Sequence[list[tuple[float, str, str, float]]], last: set[str]
) -> tuple[float, str, str, float]:
    """Take the first pair, in queue order, that shares no entry with `last`; else the
    first pair at all."""
    for queue in queues:
        for n, item in enumerate(queue):
            if not last & {item[1], item[2]}:
                return queue.pop(n)
    return next(q for q in queues if q).pop(0)
