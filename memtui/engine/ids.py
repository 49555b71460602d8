"""Ids for entries the engine creates, in the store's own style (its traits' `IdStyle`, handed
in as a value), deterministic for the same members (so planning twice proposes the same plan)."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime

from memtui.times import to_epoch_ms
from memtui.traits import IdStyle


@dataclass(frozen=True, slots=True)
class TakenIds:
    """A store's ids, indexed once (O(n)); an `IdMaker` over it starts in O(1), so a preview
    that allocates one id need not scan the store again."""

    ids: frozenset[str]
    top_number: int  # the highest all-digit id (longterm numbers its entries), 0 if none

    @classmethod
    def of(cls, ids: Iterable[str]) -> TakenIds:
        taken = frozenset(ids)
        numbers = [int(i) for i in taken if i.isascii() and i.isdigit()]
        return cls(taken, max(numbers, default=0))


class IdMaker:
    """Fresh ids not in `taken`, in `style`: the next number, or the style's stamp with a hash
    of the seed. With `index` (the same ids, indexed before) it starts in O(1) and `taken` is
    not read."""

    def __init__(
        self,
        style: IdStyle,
        taken: Collection[str],
        now: datetime,
        *,
        index: TakenIds | None = None,
    ) -> None:
        self.style = style
        self.index = index if index is not None else TakenIds.of(taken)
        self.made: set[str] = set()
        self.now_ms = to_epoch_ms(now)
        self.next_number = self.index.top_number + 1

    def _taken(self, ident: str) -> bool:
        return ident in self.index.ids or ident in self.made

    def new(self, seed: str) -> str:
        if self.style.numbered:
            while self._taken(str(self.next_number)):
                self.next_number += 1
            ident = str(self.next_number)
        else:
            salt = 0
            while True:
                digest = hashlib.sha1(f"{seed}:{salt}".encode()).hexdigest()
                ident = self.style.stamped(self.now_ms, digest[: self.style.digits])
                if not self._taken(ident):
                    break
                salt += 1
        self.made.add(ident)
        return ident
