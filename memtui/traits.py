"""What a store format declares about itself (`FormatTraits`), read wherever memtui needs to
know what a store can hold: the service and the front ends ask `store.traits`, the engine is
handed the plain values it needs (an `IdStyle`, a profile name). No code outside a format's own
module asks which format a store is (docs/formats.md lists every format's traits)."""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from memtui.model import Source, Status
from memtui.times import to_base36, to_epoch_ms

EVERY_STATUS = frozenset(Status)


@dataclass(frozen=True, slots=True)
class IdStyle:
    """How a format makes the ids of new entries: the next whole number after the highest
    all-digit id (`numbered`), or `<prefix><time><hex>` with the time in epoch milliseconds
    (hex or base 36, followed by `_`; `none`: no time) and `digits` hex digits, random for an
    entry added by hand, a hash of the members for one a plan creates (engine/ids.py)."""

    prefix: str = "m_"
    clock: Literal["hex", "base36", "none"] = "hex"
    digits: int = 6
    numbered: bool = False

    def stamped(self, now_ms: int, hex_digits: str) -> str:
        if self.clock == "hex":
            return f"{self.prefix}{now_ms:x}_{hex_digits}"
        if self.clock == "base36":
            return f"{self.prefix}{to_base36(now_ms)}_{hex_digits}"
        return f"{self.prefix}{hex_digits}"

    def fresh(self, taken: Collection[str], now: datetime) -> str:
        """A new id not in `taken`, random where it is not the next number."""
        if self.numbered:
            return str(max((int(i) for i in taken if i.isascii() and i.isdigit()), default=0) + 1)
        now_ms = to_epoch_ms(now)
        while True:
            ident = self.stamped(now_ms, os.urandom((self.digits + 1) // 2).hex()[: self.digits])
            if ident not in taken:
                return ident


# memtui's own: `m_<hex ms>_<6 hex>` (the native store's)
OWN_IDS = IdStyle()


@dataclass(frozen=True, slots=True)
class HandRules:
    """How the agent that owns a format writes what a person adds or edits by hand."""

    source: Source = Source.USER
    trims: bool = False  # content stripped of surrounding space, as its add and update do
    anchors_decay: bool = False  # a new entry is decayed as of its creation


@dataclass(frozen=True, slots=True)
class FormatTraits:
    """What one store format (or the PostgreSQL store) holds and how memtui treats it."""

    content_cap: int | None = None
    """The longest content the agent accepts in one entry (None: no cap of its own)."""
    keeps: frozenset[Status] = EVERY_STATUS
    """The statuses an entry can have in the store; an entry given another leaves it and lives
    on in memtui's ledger (deleting one is always possible: it leaves the store)."""
    categories: frozenset[str] | None = None
    """The categories an entry may take (None: any text)."""
    ids: IdStyle = OWN_IDS
    default_profile: str = "default"
    """The profile its plans use unless another is chosen (engine/profiles.py)."""
    has_users: bool = True
    """Whether an entry carries a user of its own (Hermes: the file says whose it is)."""
    export_as: str | None = None
    """Its name for `memtui export --format` (None: memtui does not export to it)."""
    lineage_in_store: bool = True
    """Whether the store keeps `supersedes`/`superseded_by` (else they come from the ledger)."""
    folds_across_users: bool = False
    """Whether the agent's own dedupe folds identical content whoever it belongs to (pi)."""
    hand: HandRules = HandRules()
    holds_importance: bool = True
    """Whether an entry's importance is written into the store (else decay would change
    nothing there, so plans propose none)."""
    plan_notes: bool = False
    """Whether the agent limits what the store holds in ways a plan should say before it is
    applied (Claude Code's loaded index, Hermes' caps): the format's `plan_notes`."""
    ledger_in_store: bool = False
    """Whether the ledger lives in the store itself (native) rather than beside it."""
    copies_table: bool = False
    """Whether `memtui backup` copies it to a file (a database table; a file store keeps
    whole-file backups of its own)."""

    def holds(self, status: Status) -> bool:
        return status in self.keeps

    @property
    def kept(self) -> str:
        """The statuses it keeps, as messages say them ("active")."""
        return ", ".join(s.value for s in Status if s in self.keeps)

    def may_take(self, status: Status) -> bool:
        """Whether an entry may be given `status` (one the store cannot hold, but deleted,
        is refused rather than dropped)."""
        return status is Status.DELETED or status in self.keeps

    @property
    def merge_keeps_members(self) -> bool:
        """Whether a merge's members stay in the store as `merged` (else they leave it and
        live on in memtui's ledger)."""
        return Status.MERGED in self.keeps

    @property
    def insight_status(self) -> Status:
        """The status of an entry a plan proposes (proposed, where the store can hold it)."""
        return Status.PROPOSED if Status.PROPOSED in self.keeps else Status.ACTIVE
