"""Merging entries by hand, superseding and restoring them, and where a merged wording came
from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memtui import curate
from memtui.curate import Lineage
from memtui.engine.ids import TakenIds
from memtui.engine.wording import clauses
from memtui.model import Memory
from memtui.service.base import ServiceBase, Store, check_text
from memtui.stores import Transaction
from memtui.stores.progress import CommitProgress


class MergesMixin(ServiceBase):
    """Merges, supersedes, restores and lineage of entries."""

    def preview_merge(
        self, store: Store, ids: Sequence[str], *, strategy: str = "rule", content: str | None
    ) -> tuple[Memory, list[Memory]]:
        """The merged entry and the retired members as `merge` would write them; the new id
        costs O(1) once the store's ids are indexed (`taken_ids`)."""
        return curate.preview_merge(
            store,
            ids,
            strategy=strategy,
            content=content,
            now=self.now(),
            taken=self.taken_ids(store),
        )

    _taken_cache: tuple[int, str, TakenIds] | None = None

    def taken_ids(self, store: Store) -> TakenIds:
        """The store's ids, indexed once per store and version: read again only after a
        commit or a reload changed the store (its fingerprint)."""
        cached = self._taken_cache
        if cached is not None and cached[0] == id(store) and cached[1] == store.fingerprint:
            return cached[2]
        taken = TakenIds.of(m.id for m in store.memories())
        self._taken_cache = (id(store), store.fingerprint, taken)
        return taken

    def merge(
        self,
        store: Store,
        ids: Sequence[str],
        *,
        strategy: str = "rule",
        content: str | None,
        new_id: str | None = None,
        progress: CommitProgress | None = None,
    ) -> Transaction:
        """Merge `ids` into one new entry (one transaction); `new_id`: the id the person saw in
        the preview, kept when free; `progress` is told its stages."""
        if content is not None:
            check_text("the merged wording", content)
        return curate.merge_by_hand(
            store,
            ids,
            strategy=strategy,
            content=content,
            now=self.now(),
            new_id=new_id,
            progress=progress,
        )

    def supersede(self, store: Store, old_id: str, new_id: str, reason: str = "") -> Transaction:
        return curate.supersede(store, old_id, new_id, reason=reason, now=self.now())

    def restore(self, store: Store, memory_id: str) -> Transaction:
        return curate.restore(store, memory_id, now=self.now())

    def lineage(self, store: Store, memory_id: str) -> Lineage:
        return curate.lineage(store, memory_id)

    def wording_provenance(self, text: str, members: Sequence[Memory]) -> dict[str, Any]:
        """Which member each clause of a merged `text` came from, in the shape of a plan's
        `details["provenance"]` (base, spans, added, left_out); a clause found in no member
        (the person's own words) is in no span."""
        return _attribute(text, members)


def _attribute(text: str, members: Sequence[Memory]) -> dict[str, Any]:
    base = max(members, key=lambda m: (text.startswith(m.content.strip()), len(m.content)))
    spans: list[list[Any]] = []
    added: list[dict[str, Any]] = []
    start = 0
    for clause in clauses(text):
        at = text.find(clause, start)
        if at < 0:
            continue
        start = at + len(clause)
        owner = next((m for m in (base, *members) if clause in m.content), None)
        if owner is None:
            continue
        if spans and spans[-1][2] == owner.id and owner.id == base.id:
            spans[-1][1] = start  # the base's clauses, one stretch
            continue
        spans.append([at, start, owner.id])
        if owner.id != base.id:
            added.append({"member": owner.id, "clause": clause, "words": []})
    return {"base": base.id, "spans": spans, "added": added, "left_out": []}
