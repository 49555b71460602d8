"""The commands about the ledger and the backups: history, undo, compact, backups, backup,
rollback."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memtui.cli import outside
from memtui.cli.common import UsageError, emit_json, print_done
from memtui.cli.registry import arg, command, one_of
from memtui.textsafe import one_line
from memtui.times import format_iso

if TYPE_CHECKING:
    from memtui.service import Service
    from memtui.stores.protocol import MemoryStore


def tx_line(tx: Any, undone_by: int | None) -> str:
    from memtui.views import entry_count

    when = format_iso(tx.at.replace(microsecond=0))
    touched = entry_count(len(tx.changes))
    tail = f"  [undone by {undone_by}]" if undone_by else ""
    return (
        f"{tx.id:>5}  {when}  {tx.actor:<5} {tx.kind:<9} {touched:<11} {one_line(tx.reason)}{tail}"
    )


def _check_history(args: argparse.Namespace) -> None:
    if args.limit is not None and args.limit < 1:
        raise UsageError("--limit must be 1 or more")


@command(
    "history",
    "transactions in the ledger, newest first",
    store=True,
    json=True,
    check=_check_history,
    arguments=(arg("--limit", type=int, metavar="N"),),
)
def cmd_history(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    from memtui.views import transaction_record

    undone = store.undone()
    history = outside.with_outside_events(svc, store, store.history())
    if args.limit is not None:
        history = history[: args.limit]
    if args.json:
        emit_json([transaction_record(tx, outside.undone_by(tx, undone)) for tx in history])
        return 0
    if not history:
        print("no transactions yet", file=sys.stderr)
    for tx in history:
        print(outside.history_line(tx) or tx_line(tx, undone.get(tx.id)))
    return 0


def _check_undo(args: argparse.Namespace) -> None:
    if args.with_later and args.tx is None:
        raise UsageError("--with-later needs the transaction id: memtui undo STORE N --with-later")


@command(
    "undo",
    "revert a transaction (default: the newest not undone)",
    store=True,
    json=True,
    arguments=(
        arg("tx", type=int, nargs="?", metavar="TX_ID"),
        arg(
            "--with-later",
            action="store_true",
            help="undo the later transactions that changed the same entries too, as one",
        ),
    ),
    by_user=lambda a: True,  # a table: undo reads the ledger's images, not the rows
)
def cmd_undo(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    from memtui.views import entry_count, transaction_detail

    _check_undo(args)  # after the store is opened, as memtui always said it
    if args.with_later:
        tx = svc.history.undo_with_later(store, args.tx)
    else:
        tx = svc.history.undo(store, args.tx)
    if args.json:
        emit_json(transaction_detail(tx))
        return 0
    undid = tx.reason.removeprefix("undo of ") if args.with_later else f"transaction {tx.undoes}"
    print(f"undid {undid} as transaction {tx.id}: {entry_count(len(tx.changes))} restored")
    print(f"redo with: memtui undo {store.path} {tx.id}")
    return 0


def _check_compact(args: argparse.Namespace) -> None:
    if args.keep is not None and args.keep < 1:
        raise UsageError("--keep must be at least 1 (transaction ids go on from the newest)")
    if args.days is not None and args.days < 0:
        raise UsageError("--days cannot be negative")


@command(
    "compact",
    "shrink a native store's journal (undo kept)",
    store=True,
    json=True,
    check=_check_compact,
    arguments=(
        one_of(
            arg("--keep", type=int, metavar="N", help="keep the newest N transactions"),
            arg("--days", type=float, metavar="D", help="keep the last D days"),
        ),
    ),
)
def cmd_compact(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    from memtui.views import counted

    done = svc.history.compact(store, keep=args.keep, days=args.days)
    if args.json:
        emit_json(done.to_dict())
        return 0
    print(
        f"compacted {args.store}: {done.bytes_before:,} → {done.bytes_after:,} bytes; "
        f"{counted(done.kept, 'transaction')} kept (undoable)"
    )
    if done.moved:
        print(f"{done.moved} older transactions moved to {done.archive}")
    print(f"the file as it was is kept as backup {done.backup}")
    return 0


@command("backups", "the rolling backups kept beside the store", store=True, json=True)
def cmd_backups(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    from memtui.views import backup_record

    backups = svc.history.backups(store)
    if args.json:
        emit_json([backup_record(b) for b in backups])
        return 0
    if not backups:
        print("no backups yet (one is kept before each change)", file=sys.stderr)
    for n, b in enumerate(backups, start=1):
        print(f"{n:>3}  {b.name}  {b.size:>12,} bytes  before transaction {b.tx_id}")
    return 0


@command(
    "backup",
    "copy a PostgreSQL store's table to a file",
    store=True,
    arguments=(arg("dest", metavar="DEST"),),
)
def cmd_backup(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    dest = Path(args.dest).expanduser()
    count = svc.history.copy_table(store, dest)
    print(f"copied {count} rows of {store.path} to {dest} (Go records, JSON Lines)")
    return 0


def _check_rollback(args: argparse.Namespace) -> None:
    if (args.backup is None) == (args.source is None):
        raise UsageError("give a backup name or --from FILE (one of them)")


@command(
    "rollback",
    "make the store what a backup holds (undoable)",
    store=True,
    json=True,
    check=_check_rollback,
    arguments=(
        arg(
            "backup",
            metavar="BACKUP",
            nargs="?",
            help="backup name, a unique prefix, or 1 = newest",
        ),
        arg(
            "--from",
            dest="source",
            metavar="FILE",
            help="a PostgreSQL store: the copy `memtui backup` wrote to FILE",
        ),
    ),
)
def cmd_rollback(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    from memtui.views import transaction_detail

    if args.source is not None:
        tx = svc.history.rollback_from_copy(store, Path(args.source).expanduser())
    else:
        tx = svc.history.rollback(store, args.backup)
    if args.json:
        emit_json(transaction_detail(tx))
        return 0
    print_done(
        f"rolled back to {tx.details['backup']} in transaction {tx.id}: "
        f"{len(tx.changes)} entries changed",
        store,
        tx,
    )
    return 0
