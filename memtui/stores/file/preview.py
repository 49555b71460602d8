"""A store's document as a set of changes would leave it, made in memory only (what a plan's
notes are read from: `Store.plan_notes`); the commit builds its own under the lock."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from memtui.stores.formats.document import Document, StoreFormat

if TYPE_CHECKING:
    from memtui.stores.file.store import Change


def after(fmt: StoreFormat, doc: Document, changes: Sequence[Change]) -> Document:
    out = doc.copy()
    out.header.pop("sources", None)
    for change in changes:
        ident = change.id
        before_raw = doc.raws.get(ident)
        memory = change.after
        if memory is not None and fmt.keeps(memory):
            encoded = change.after_raw or fmt.encode(memory, before_raw)
            if encoded is None:
                continue
            out.memories[ident] = memory
            out.raws[ident] = fmt.successor(encoded, before_raw)
        else:
            out.memories.pop(ident, None)
            out.raws.pop(ident, None)
    return out
