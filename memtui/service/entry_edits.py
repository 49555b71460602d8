"""Changing one entry by hand: edit, archive, delete, restore its status, add one; each
refused, with the reason, where the store's format cannot hold the result."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memtui.errors import MemtuiError
from memtui.model import HIDDEN_STATUSES, Memory, Status
from memtui.service.base import Part, check_text
from memtui.stores import Actor, Change, Transaction
from memtui.stores.protocol import MemoryStore
from memtui.traits import HandRules


@dataclass(frozen=True, slots=True)
class EntryEdit:
    """What a person changes in one entry; None leaves a field as it is."""

    content: str | None = None
    importance: float | None = None
    tags: tuple[str, ...] | None = None
    status: Status | None = None
    category: str | None = None

    def fields(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__ if getattr(self, k) is not None}


def hand_rules(store: MemoryStore) -> HandRules:
    return store.traits.hand


class Entries(Part):
    """Edits of one entry, each one transaction."""

    def edited(self, store: MemoryStore, memory_id: str, edit: EntryEdit) -> Memory | None:
        """What the entry would become (nothing is written), or None when nothing would
        change; refused, with the reason, where the store's format cannot hold it (its traits:
        pi caps content at 500 characters, has six types and holds active entries only)."""
        before = store.get(memory_id)
        if edit.content is not None and hand_rules(store).trims:
            edit = dataclasses.replace(edit, content=edit.content.strip())
        changes = edit.fields()
        if edit.content is not None:
            self._check_content(store, edit.content)
        for tag in edit.tags or ():
            check_text("a tag", tag)
        if edit.importance is not None:
            self._check_importance(edit.importance)
        if edit.category is not None:
            self._check_category(store, edit.category)
        if edit.status is not None and edit.status is not before.status:
            self._check_status_fits(store, edit.status)
        if not any(getattr(before, k) != v for k, v in changes.items()):
            return None
        after = before.with_(**changes, updated_at=self.shared.now())
        self._check_held(store, after, changes)
        return after

    def _check_held(self, store: MemoryStore, after: Memory, changes: dict[str, Any]) -> None:
        """Refuse a field the store's file cannot keep (Hermes' entries are text only), rather
        than record an edit that changes nothing."""
        held = store.visible(after)
        if held is None:
            return  # a status the file does not hold: the entry leaves it
        for key in ("importance", "tags", "category"):
            if key in changes and getattr(held, key) != changes[key]:
                raise MemtuiError(
                    f"{store.path}: a {store.format_name} store cannot keep an entry's {key}; "
                    "nothing was written"
                )

    def edit(
        self, store: MemoryStore, memory_id: str, edit: EntryEdit, reason: str | None = None
    ) -> Transaction | None:
        """Change one entry as one transaction; None when nothing would change. The store's
        format rules apply (see `edited`; the Go system's version moves forward in the store
        layer)."""
        before = store.get(memory_id)
        after = self.edited(store, memory_id, edit)
        if after is None:
            return None
        changed = sorted(k for k in edit.fields() if getattr(before, k) != getattr(after, k))
        return store.commit(
            [Change(before, after)],
            actor=Actor.USER,
            kind="edit",
            reason=reason or "edited by hand: " + ", ".join(changed),
            now=after.updated_at or self.shared.now(),
        )

    def status_refusal(self, store: MemoryStore, memory: Memory, status: Status) -> str | None:
        """Why `memory` cannot take `status` in this store (one line), or None if it can."""
        if memory.status is status:
            return f"{memory.id} is already {status.value}"
        if memory.status in HIDDEN_STATUSES and memory.status is not Status.DELETED:
            return f"{memory.id} is {memory.status.value}; restore it first (l, then r)"
        if status in (Status.MERGED, Status.SUPERSEDED):
            return f"an entry becomes {status.value} by a merge or a supersede, not by hand"
        try:
            self._check_status_fits(store, status)
        except MemtuiError as e:
            return str(e)
        return None

    def set_status(
        self, store: MemoryStore, memory_id: str, status: Status, reason: str | None = None
    ) -> Transaction:
        """Archive, delete (soft: restorable) or bring back one entry, as one transaction. On a
        pi store a deleted entry leaves the file and lives in the ledger."""
        before = store.get(memory_id)
        refusal = self.status_refusal(store, before, status)
        if refusal:
            raise MemtuiError(refusal)
        now = self.shared.now()
        verb = {Status.ARCHIVED: "archived", Status.DELETED: "deleted"}.get(
            status, f"{before.status.value} → {status.value}"
        )
        return store.commit(
            [Change(before, before.with_(status=status, updated_at=now))],
            actor=Actor.USER,
            kind="status",
            reason=reason or f"{verb} by hand",
            now=now,
        )

    def new_memory(
        self,
        store: MemoryStore,
        content: str,
        *,
        category: str = "fact",
        importance: float = 0.8,
        tags: Sequence[str] = (),
        user_id: str | None = None,
    ) -> Memory:
        """A new entry written by the user (nothing is written yet), as the store's agent
        writes one added by hand (its traits' `hand`); refused, with the reason, where the
        store's format cannot hold it."""
        rules = hand_rules(store)
        if rules.trims:
            content = content.strip()
        self._check_content(store, content)
        self._check_importance(importance)
        self._check_category(store, category)
        for tag in tags:
            check_text("a tag", tag)
        check_text("the user", user_id or "")
        if user_id and not store.traits.has_users:
            raise MemtuiError(
                f"a {store.format_name} store's entries carry no user (the file says whose "
                "they are); leave the user out"
            )
        now = self.shared.now()
        return Memory(
            id=store.new_id(now),
            content=content,
            category=category,
            importance=importance,
            source=rules.source,
            tags=tuple(tags),
            created_at=now,
            last_accessed_at=now,
            last_decayed_at=now if rules.anchors_decay else None,
            updated_at=now,
            user_id=user_id or None,
        )

    def add_memory(
        self, store: MemoryStore, memory: Memory, reason: str | None = None
    ) -> Transaction:
        """Add `memory` (from `new_memory`) as one transaction; undo removes it."""
        self._check_content(store, memory.content)
        if store.find(memory.id) is not None:
            raise MemtuiError(f"{store.path}: an entry with id {memory.id!r} exists already")
        return store.commit(
            [Change(None, memory)],
            actor=Actor.USER,
            kind="add",
            reason=reason or "added by hand",
            now=memory.created_at or self.shared.now(),
        )

    def _check_content(self, store: MemoryStore, content: str) -> None:
        if not content.strip():
            raise MemtuiError("the content must not be empty")
        check_text("the content", content)
        cap = store.traits.content_cap
        if cap is not None and len(content) > cap:
            raise MemtuiError(
                f"the content is {len(content)} characters; {store.format_name} stores cap "
                f"content at {cap}"
            )

    def keeps_merged(self, store: MemoryStore) -> bool:
        """Whether the store's file keeps the members of a merge (status merged); pi's does
        not: they leave it and live on in memtui's ledger."""
        return store.traits.merge_keeps_members

    def _check_status_fits(self, store: MemoryStore, status: Status) -> None:
        traits = store.traits
        if not traits.may_take(status):
            raise MemtuiError(
                f"{store.format_name} stores hold {traits.kept} entries only; {status.value} "
                "cannot be kept in the file (delete it instead: it leaves the file and stays "
                "in memtui's ledger)"
            )

    def _check_importance(self, importance: float) -> None:
        if not 0.0 <= importance <= 1.0:
            raise MemtuiError(f"the importance must be between 0 and 1, got {importance}")

    def _check_category(self, store: MemoryStore, category: str) -> None:
        if not category.strip():
            raise MemtuiError("the category must not be empty")
        check_text("the category", category)
        types = store.traits.categories
        if types is not None and category not in types:
            raise MemtuiError(
                f"{store.format_name} stores hold these types only: {', '.join(sorted(types))}; "
                f"not {category!r}"
            )

    def categories(self, store: MemoryStore) -> list[str]:
        """The categories an entry of this store may take (pi: its six types), or those its
        entries use, for the user to pick from."""
        if store.traits.categories is not None:
            return sorted(store.traits.categories)
        return sorted({m.category for m in store.memories()} | {"fact"})
