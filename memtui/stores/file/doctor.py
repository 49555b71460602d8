"""`memtui doctor`: what is wrong with a store's ledger and sidecar, and the repairs memtui can
make safely (nothing is deleted: damaged entries are moved aside, the store backed up)."""

from __future__ import annotations

from datetime import UTC, datetime

from memtui.errors import MemtuiError
from memtui.jsonout import dumps
from memtui.stores.detect import with_layout
from memtui.stores.file.files import atomic_write, read_bytes, sha256, writing
from memtui.stores.file.store import Store
from memtui.stores.ledger import LedgerEntryError, Transaction, journal_value


def repair(store: Store, now: datetime) -> list[str]:
    """Repair what can be repaired; one line per repair made."""
    stamp = f"{now.astimezone(UTC):%Y%m%dT%H%M%S}Z"
    done: list[str] = []
    with store.format.write_lock(store.file), writing(store.sidecar):
        if store.format.traits.ledger_in_store:
            done += _move_damaged_journal_entries(store, stamp, now)
        else:
            done += _repair_sidecar_ledger(store, stamp)
    return done


def _repair_sidecar_ledger(store: Store, stamp: str) -> list[str]:
    ledger = store.sidecar_ledger
    assert ledger is not None
    done = []
    read = ledger.read()
    if read.problems and ledger.path.is_file():
        aside = ledger.path.with_name(f"{ledger.path.name}.damaged-{stamp}")
        dropped = ledger.repair(aside)
        done.append(
            f"moved the damaged ledger to {aside}; the new ledger keeps its readable lines "
            f"({dropped} left out)"
        )
    gap = store.record_gap()
    if gap is not None:
        done.append(gap)
    done += store.reclaim_leftovers()
    if (
        read.owner is not None
        and read.owner != str(store.path)
        and not store.sidecar.is_symlink()
        and not ledger.path.is_symlink()
    ):
        ledger.adopt()
        done.append(f"{ledger.path}: now belongs to {store.path} (it was {read.owner}'s)")
    return done


def _move_damaged_journal_entries(store: Store, stamp: str, now: datetime) -> list[str]:
    data = read_bytes(store.path)
    if sha256(data) != store.fingerprint:
        raise MemtuiError(f"{store.path}: changed since memtui read it; run doctor again")
    doc = store.document()
    good, bad = [], []
    for entry in map(journal_value, doc.header.get("journal", [])):
        try:
            Transaction.from_dict(entry)
            good.append(entry)
        except LedgerEntryError:
            bad.append(entry)
    if not bad:
        return []
    aside = store.sidecar / f"journal-damaged-{stamp}.json"
    store.sidecar.mkdir(mode=0o700, parents=True, exist_ok=True)
    atomic_write(aside, dumps(bad, indent=True), mode=0o600)
    backup = store.keep_backup(data, now)
    doc.header["journal"] = good
    atomic_write(
        store.path, with_layout(store.format.render(doc, None), doc.header.get("layout_bytes"))
    )
    store.reload()
    return [
        f"moved {len(bad)} damaged journal entries to {aside} (the store as it was: "
        f"backup {backup})"
    ]
