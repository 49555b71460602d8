"""The ledger checked against the backups beside it: a ledger that lost transactions (cut
short, emptied, deleted while the store kept their changes) is a finding, and what commits
that did not happen left (aborted intents, a dead writer's backup) is a leftover to reclaim.
`LedgerState` is the ledger as a store read it."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtui.errors import MemtuiError
from memtui.stores.detect import parse_store
from memtui.stores.file.backups import Backup, BackupShelf
from memtui.stores.file.files import sha256
from memtui.stores.formats.document import StoreFormat
from memtui.stores.ledger import LedgerRead, SidecarLedger, Transaction


@dataclass(slots=True)
class LedgerState:
    transactions: list[Transaction]
    pending: list[Transaction]  # left pending by a writer that died, now resolved
    problems: list[str]
    lost_through: int = 0
    read: LedgerRead | None = None  # the sidecar ledger as read (None: in the file, or cached)
    # backups of transactions a memtui stopped before recording (they hold the file as it is)
    leftover_backups: list[Backup] = field(default_factory=list)


def _counted(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _id_span(ids: list[int]) -> str:
    if len(ids) == 1:
        return str(ids[0])
    if ids == list(range(ids[0], ids[-1] + 1)):
        return f"{ids[0]}–{ids[-1]}"
    return ", ".join(map(str, ids))


class LedgerAudit:
    """What `Store` knows about its ledger beyond reading it (a part of `Store`)."""

    path: Any
    sidecar: Path
    format: StoreFormat
    _ledger: SidecarLedger | None
    _sha: str
    _ledger_cache: Any

    @property
    def _shelf(self) -> BackupShelf:
        raise NotImplementedError

    def _ledger_state(self) -> LedgerState:
        raise NotImplementedError

    def _unrecorded_backups(self, read: LedgerRead, sha: str) -> tuple[list[int], list[Backup]]:
        """The backups of transactions newer than any the ledger records: those of
        transactions the ledger lost (their ids), and the one a memtui stopped before it
        recorded its transaction left (it holds the file as it still is)."""
        known = max([t.id for t in read.transactions] + [read.lost_through], default=0)
        orphans = [b for b in self._shelf.list() if b.tx_id > known]
        if not orphans:
            return [], []
        leftover: list[Backup] = []
        for backup in orphans:  # newest first; a file merely named like a backup is no sign
            try:
                content = self._shelf.read(backup)
                if sha256(content) == sha:
                    leftover.append(backup)
                    continue
                if parse_store(content, backup.path)[0].name != self.format.name:
                    continue
            except MemtuiError:
                continue
            kept = {b.name for b in leftover}
            ids = {b.tx_id for b in orphans if b.tx_id <= backup.tx_id and b.name not in kept}
            return sorted(ids), leftover
        return [], leftover

    def _missing_finding(self, missing: list[int]) -> str:
        assert self._ledger is not None
        ids = _id_span(missing)
        return (
            f"{self._ledger.path}: does not record transaction{'s' if len(missing) > 1 else ''} "
            f"{ids}, though {'their backups are' if len(missing) > 1 else 'its backup is'} in "
            f"{self.sidecar / 'backups'} and the store changed since — the ledger was cut "
            f"short, emptied or deleted; undo would pick the wrong transaction, so memtui "
            f"changes nothing until `memtui doctor {self.path} --fix` records the gap (the "
            "store stays as it is; `memtui backups` and `memtui rollback` still reach every "
            "backup)"
        )

    def leftovers(self) -> list[str]:
        """What commits that did not happen left behind (aborted intents in the ledger, a
        backup no transaction records), one line each; harmless, reclaimed by
        `memtui doctor --fix`."""
        state = self._ledger_state()
        lines = []
        aborted = {t.id for t in state.transactions if t.state == "aborted"}
        if aborted and state.read is not None:
            size = state.read.bytes_of(aborted)
            lines.append(
                f"{self._ledger.path if self._ledger else self.path}: "
                f"{_counted(len(aborted), 'aborted transaction')} "
                f"({_id_span(sorted(aborted))}) still hold {size:,} bytes of the ledger"
            )
        for backup in state.leftover_backups:
            lines.append(
                f"{backup.path}: a backup no transaction records (a memtui stopped before it "
                f"wrote); it holds the store as it is, {backup.size:,} bytes"
            )
        return lines

    def reclaim_leftovers(self) -> list[str]:
        """Remove what `leftovers` names (call under the store's lock); one line per repair."""
        state = self._ledger_state()
        done = []
        aborted = {t.id for t in state.transactions if t.state == "aborted"}
        if aborted and self._ledger is not None and self._ledger.path.is_file():
            stamp = f"{os.getpid()}-{os.urandom(3).hex()}"
            aside = self._ledger.path.with_name(f"{self._ledger.path.name}.before-reclaim-{stamp}")
            self._ledger.without(aborted, aside)
            for tx in state.transactions:
                if tx.id in aborted and tx.backup:
                    self._discard_backup(tx.backup)
            done.append(
                f"removed {_counted(len(aborted), 'aborted transaction')} from the ledger (the "
                f"ledger as it was: {aside})"
            )
        for backup in state.leftover_backups:
            self._shelf.discard(backup)
            done.append(f"removed {backup.path} (the store as it still is)")
        self._ledger_cache = None
        return done

    def _discard_backup(self, name: str) -> None:
        with contextlib.suppress(MemtuiError):
            self._shelf.discard(self._shelf.find(name))

    def lost_through(self) -> int:
        """Transactions up to this id are known to be missing from the ledger (0: none)."""
        return self._ledger_state().lost_through

    def record_gap(self) -> str | None:
        """Record in the ledger that the transactions its backups show are missing from it
        (call under the store's lock); what was done, or None when nothing is missing."""
        state = self._ledger_state()
        if self._ledger is None or state.read is None:
            return None
        missing, _ = self._unrecorded_backups(state.read, self._sha)
        if not missing:
            return None
        self._ledger.record_gap(missing[-1])
        self._ledger_cache = None
        return (
            f"{self._ledger.path}: recorded that transaction {_id_span(missing)} is missing; "
            f"new transactions are numbered from {missing[-1] + 1}, and `memtui undo` without "
            "an id refuses to reach past the gap"
        )
