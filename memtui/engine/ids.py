"""Ids for entries the engine creates, in each store format's own style, deterministic for
the same members (so planning twice proposes the same plan)."""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from datetime import datetime

from memtui.times import to_base36, to_epoch_ms


class IdMaker:
    """Fresh ids not in `taken`: `mem_<base36 ms>_<8 hex>` (pi), the next integer (longterm),
    `m_<hex ms>_<6 hex>` (native)."""

    def __init__(self, store_format: str, taken: Collection[str], now: datetime) -> None:
        self.format = store_format
        self.taken = set(taken)
        self.now_ms = to_epoch_ms(now)
        numbers = [int(i) for i in self.taken if i.isascii() and i.isdigit()]
        self.next_number = max(numbers, default=0) + 1

    def new(self, seed: str) -> str:
        if self.format == "longterm":
            while str(self.next_number) in self.taken:
                self.next_number += 1
            ident = str(self.next_number)
        else:
            salt = 0
            while True:
                digest = hashlib.sha1(f"{seed}:{salt}".encode()).hexdigest()
                if self.format == "pi":
                    ident = f"mem_{to_base36(self.now_ms)}_{digest[:8]}"
                else:
                    ident = f"m_{self.now_ms:x}_{digest[:6]}"
                if ident not in self.taken:
                    break
                salt += 1
        self.taken.add(ident)
        return ident
