"""Merging entries by hand, superseding and restoring them, and where a merged wording came
from."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memtui.engine.ids import IdMaker, TakenIds
from memtui.engine.merging import merge_entries, retire
from memtui.engine.profiles import get_profile
from memtui.engine.wording import clauses, rule_wording
from memtui.errors import MemtuiError, NotFoundError
from memtui.model import Memory, Status
from memtui.service.base import History, Part, check_text, record_of
from memtui.stores import Actor, Change, Transaction
from memtui.stores.ledger import ChangeImage
from memtui.stores.progress import CommitProgress
from memtui.stores.protocol import MemoryStore
from memtui.times import format_iso
from memtui.views import entry_count


class Merges(Part):
    """Merges, supersedes, restores and lineage of entries."""

    def preview_merge(
        self,
        store: MemoryStore,
        ids: Sequence[str],
        *,
        strategy: str = "rule",
        content: str | None,
        new_id: str | None = None,
    ) -> tuple[Memory, list[Memory]]:
        """The merged entry and the retired members, as `merge` would write them (the new id
        costs O(1) once the store's ids are indexed, `taken_ids`; `new_id`: the id a preview
        showed, kept when the store does not hold it)."""
        members = _merge_members(store, ids)
        if new_id is None or store.find(new_id) is not None:
            new_id = IdMaker(
                store.traits.ids, (), self.shared.now(), index=self.taken_ids(store)
            ).new("|".join(m.id for m in members))
        rule = merge_rule(store, strategy)
        base = None
        if rule == "memtui" and content is None:
            profile = get_profile(store.traits.default_profile)
            wording = rule_wording(members, profile.wording_max_chars)
            content = wording.text
            base = next(m for m in members if m.id == wording.base)
        return merge_entries(
            members, new_id=new_id, now=self.shared.now(), rule=rule, content=content, base=base
        )

    _taken_cache: tuple[int, str, TakenIds] | None = None

    def taken_ids(self, store: MemoryStore) -> TakenIds:
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
        store: MemoryStore,
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
        members = _merge_members(store, ids)
        merged, retired = self.preview_merge(
            store, ids, strategy=strategy, content=content, new_id=new_id
        )
        how = "own text" if content is not None else strategy
        changes = [
            Change(None, merged),
            *(Change(m, r) for m, r in zip(members, retired, strict=True)),
        ]
        return store.commit(
            changes,
            actor=Actor.USER,
            kind="merge",
            now=self.shared.now(),
            reason=f"merged {entry_count(len(members))} by hand ({how})",
            details={"merged": merged.id},
            progress=progress,
        )

    def supersede(
        self, store: MemoryStore, old_id: str, new_id: str, reason: str = ""
    ) -> Transaction:
        if old_id == new_id:
            raise MemtuiError("an entry cannot supersede itself")
        old, new = _live_members(store, [old_id, new_id])
        if old.user_id != new.user_id:
            raise MemtuiError(f"{old_id} and {new_id} belong to different users")
        now = self.shared.now()
        [retired] = retire([old], new.id, now, Status.SUPERSEDED)
        successor = new.with_(supersedes=(*new.supersedes, old.id), updated_at=now)
        return store.commit(
            [Change(old, retired), Change(new, successor)],
            actor=Actor.USER,
            kind="supersede",
            reason=reason or f"{new_id} replaces {old_id}",
            now=now,
        )

    def restore(self, store: MemoryStore, memory_id: str) -> Transaction:
        """Bring an entry back. A merge or absorption is undone as one unit: every member
        returns, a merged entry that the merge created is removed (status deleted, restorable
        in turn), and the lineage links are cut. A superseded entry returns and its successor
        forgets it."""
        now, ident = self.shared.now(), memory_id
        history = History.of(store)
        entry = record_of(store, ident, history)
        if entry is None:
            raise NotFoundError(f"{store.path}: no memory with id {ident!r}, now or in the ledger")
        if entry.status is Status.ACTIVE:
            raise MemtuiError(f"{ident} is active; there is nothing to restore")
        changes: dict[str, Change] = {}

        def bring_back(member: Memory) -> None:
            before = store.find(member.id)
            image = history.latest(member.id)
            back = member.with_(
                status=Status.ACTIVE,
                superseded_by=None,
                superseded_at=None,
                updated_at=now,
                extra={k: v for k, v in member.extra.items() if k != "supersede_reason"},
            )
            position = image.position if image is not None and before is None else None
            changes[member.id] = Change(
                before if before is not None else member,
                back,
                _record_back(store, image, back),
                position,
            )

        successor_id = entry.superseded_by if entry.status in RETIRED else None
        if successor_id is None:
            bring_back(entry)
            reason = f"restored {ident} ({entry.status.value} → active)"
        else:
            successor = record_of(store, successor_id, history)
            members = [entry]
            if successor is not None:
                for other_id in successor.supersedes:
                    other = record_of(store, other_id, history)
                    if (
                        other is not None
                        and other.id != ident
                        and other.status in RETIRED
                        and other.superseded_by == successor_id
                    ):
                        members.append(other)
            for member in members:
                bring_back(member)
            unit = entry.status is Status.MERGED and successor is not None
            created = history.created_by_merge(successor_id) if successor is not None else None
            current = store.find(successor_id)
            if successor is not None and successor.status is Status.ACTIVE:
                if unit and (
                    created
                    or (created is None and set(successor.supersedes) <= {m.id for m in members})
                ):
                    after = successor.with_(status=Status.DELETED, updated_at=now)
                    what = f"removed the merged entry {successor_id}"
                else:
                    remaining = tuple(s for s in successor.supersedes if s not in changes)
                    after = successor.with_(supersedes=remaining, updated_at=now)
                    whom = "them" if len(members) > 1 else "it"
                    what = f"{successor_id} no longer supersedes {whom}"
                changes[successor_id] = Change(current if current is not None else successor, after)
            elif current is not None:  # the successor is itself retired: it forgets them too
                remaining = tuple(s for s in current.supersedes if s not in changes)
                changes[successor_id] = Change(
                    current, current.with_(supersedes=remaining, updated_at=now)
                )
                what = f"{successor_id} no longer supersedes {'them' if len(members) > 1 else 'it'}"
            else:
                what = "its successor is gone"
            names = ", ".join(m.id for m in members)
            reason = f"restored {names} from {successor_id}; {what}"
        return store.commit(
            list(changes.values()), actor=Actor.USER, kind="restore", reason=reason, now=now
        )

    def lineage(self, store: MemoryStore, memory_id: str) -> Lineage:
        """What the entry replaced and what replaced it, transitively, with the events."""
        ident = memory_id
        history = History.of(store)
        start = record_of(store, ident, history)
        if start is None:
            raise NotFoundError(f"{store.path}: no memory with id {ident!r}, now or in the ledger")
        records = {ident: start}

        def get(i: str) -> Memory | None:
            if i not in records:
                found = record_of(store, i, history)
                if found is None:
                    return None
                records[i] = found
            return records[i]

        older: list[str] = []
        stack = list(start.supersedes)
        while stack:
            current = stack.pop(0)
            if current in older or current == ident:
                continue
            older.append(current)
            record = get(current)
            if record is not None:
                stack.extend(record.supersedes)
        newer: list[str] = []
        successor = start.superseded_by
        while successor and successor not in newer and successor != ident:
            newer.append(successor)
            record = get(successor)
            successor = record.superseded_by if record is not None else None
        chain = {ident, *older, *newer}
        events: list[dict[str, Any]] = []
        for i in chain:
            record = records.get(i)
            # links the source system made itself (no ledger entry explains them)
            if i in history.images:
                continue
            if record is not None and record.superseded_by and record.superseded_at:
                reason = str(record.extra.get("supersede_reason", ""))
                events.append(
                    {
                        "at": format_iso(record.superseded_at),
                        "tx": None,
                        "actor": "source",
                        "kind": record.status.value,
                        "reason": reason,
                        "memory_ids": [i, record.superseded_by],
                    }
                )
        seen_tx: set[int] = set()
        for i in chain:
            for tx, _ in history.images.get(i, []):
                if tx.id not in seen_tx:
                    seen_tx.add(tx.id)
                    events.append(
                        {
                            "at": format_iso(tx.at),
                            "tx": tx.id,
                            "actor": tx.actor,
                            "kind": tx.kind,
                            "reason": tx.reason,
                            "memory_ids": [m for m in tx.memory_ids if m in chain],
                        }
                    )
        events.sort(key=lambda e: e["at"])
        return Lineage(ident, older, newer, records, events)

    def wording_provenance(self, text: str, members: Sequence[Memory]) -> dict[str, Any]:
        """Which member each clause of a merged `text` came from, in the shape of a plan's
        `details["provenance"]` (base, spans, added, left_out); a clause found in no member
        (the person's own words) is in no span."""
        return _attribute(text, members)


RETIRED = (Status.MERGED, Status.SUPERSEDED)


@dataclass(slots=True)
class Lineage:
    id: str
    supersedes: list[str]
    superseded_by: list[str]
    records: dict[str, Memory]
    events: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "supersedes": self.supersedes,
            "superseded_by": self.superseded_by,
            "events": self.events,
        }


def _live_members(store: MemoryStore, ids: Sequence[str]) -> list[Memory]:
    if len(set(ids)) != len(ids):
        raise MemtuiError("the same entry is named twice")
    members = [store.get(i) for i in ids]
    for m in members:
        if m.status in RETIRED or m.status is Status.DELETED:
            raise MemtuiError(f"{m.id} is {m.status.value}; restore it before merging it")
    return members


def _merge_members(store: MemoryStore, ids: Sequence[str]) -> list[Memory]:
    """The entries named, in store order, as a plan's merge takes them (in every format: the
    merged entry's tags, paths and first member do not follow the order they were named in)."""
    named = {m.id: m for m in _live_members(store, ids)}
    return [m for m in store.memories() if named.pop(m.id, None) is not None] + [*named.values()]


def merge_rule(store: MemoryStore, strategy: str) -> str:
    if strategy == "keep-base":
        return "keep-base"
    if strategy != "rule":
        raise MemtuiError(f"unknown merge strategy {strategy!r} (use rule or keep-base)")
    return get_profile(store.traits.default_profile).merge_rule


def _record_back(
    store: MemoryStore, image: ChangeImage | None, back: Memory
) -> dict[str, Any] | None:
    """The record the file held before the entry left it, when it says what `back` says: the
    entry then comes back byte for byte (its key order included)."""
    raw = image.before_raw if image is not None and image.after_raw is None else None
    if raw is None or store.find(back.id) is not None:
        return None
    return raw if store.returns_as(raw, back) else None


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
