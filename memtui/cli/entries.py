"""The commands that show or change entries: stats, list, show, edit, add, merge, supersede,
restore, chain."""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from typing import TYPE_CHECKING, Any

from memtui.cli import outside
from memtui.cli.common import UsageError, check_fraction, emit_json, print_done, usage_checked
from memtui.cli.history import tx_line
from memtui.cli.registry import arg, command
from memtui.errors import MemtuiError
from memtui.jsonout import dumps_text
from memtui.sizes import size_text
from memtui.textsafe import literal, one_line

if TYPE_CHECKING:
    from memtui.model import Status
    from memtui.service import Service
    from memtui.stores.protocol import MemoryStore


def _to_the_second(iso: str) -> str:
    """`2026-08-01T13:25:45.71Z` as `2026-08-01T13:25:45Z`: one precision for people to read."""
    return re.sub(r"\.\d+Z$", "Z", iso)


def _journal(stats: dict[str, Any]) -> str:
    """How much of a native store's file its journal takes, and past half how to shrink it."""
    journal, size = stats["journal_bytes"], stats["file_bytes"]
    if journal is None or not size:
        return ""
    said = f"; the journal is {size_text(journal)} of the file's {size_text(size)}"
    if journal > size / 2:
        said += f" (memtui compact {literal(stats['path'])} --keep N moves older ones out)"
    return said


SHOWN = 12
"""Values of one count (users, categories, …) `stats` prints at most; `--json` has them all."""


@command("stats", "counts by status, category, source and user", store=True, json=True)
def cmd_stats(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    from memtui.views import counted, store_stats

    stats = store_stats(store)
    since = outside.look(svc, store)
    if args.json:
        emit_json({**stats, **outside.stats_fields(since)})
        return 0
    print(f"{literal(stats['path'])}  ({stats['format']} store)")
    print(f"  entries     {stats['total']}  (tenured {stats['tenured']})")
    for key, label in (
        ("by_status", "status"),
        ("by_category", "category"),
        ("by_source", "source"),
        ("users", "users"),
    ):
        if stats[key]:
            counts = list(stats[key].items())  # most first
            pairs = ", ".join(f"{one_line(str(k))} {v}" for k, v in counts[:SHOWN])
            if len(counts) > SHOWN:
                pairs += f" … and {len(counts) - SHOWN:,} more (--json lists them all)"
            print(f"  {label:<11} {pairs}")
    if stats["oldest"]:
        oldest, newest = (_to_the_second(stats[k]) for k in ("oldest", "newest"))
        print(f"  created     {oldest} … {newest}")
    print(
        f"  ledger      {counted(stats['transactions'], 'transaction')}, "
        f"{counted(stats['backups'], 'backup')}{_journal(stats)}"
    )
    for finding in stats["findings"]:
        print(f"  finding     {literal(finding)}")
    if since is not None:
        print(f"  {since.line}")
    return 0


@command(
    "list",
    "list entries, filtered and sorted",
    store=True,
    json=True,
    arguments=(
        arg("--status", metavar="S", help="visible (default), all, or statuses a,b"),
        arg("--user", metavar="U", help="only this user's entries"),
        arg("--query", metavar="TEXT", help="substring of content, tags, id or category"),
        arg("--sort", metavar="FIELD", help="importance, created, used, accesses, …"),
        arg("--desc", action="store_true", help="sort descending"),
        arg("--limit", type=int, metavar="N", help="at most N entries"),
    ),
)
def cmd_list(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    from memtui.model import STATUS_SYMBOL
    from memtui.views import age_text, memory_record, parse_statuses, select, shorten

    if args.limit is not None and args.limit < 0:
        raise UsageError("--limit must be 0 or more")
    statuses = usage_checked(lambda: parse_statuses(args.status))
    usage_checked(lambda: select([], sort=args.sort))  # an unknown field is a usage error
    chosen = select(
        store.memories(),
        statuses=statuses,
        user=args.user,
        query=args.query,
        sort=args.sort,
        descending=args.desc,
        limit=args.limit,
    )
    if args.json:
        emit_json([memory_record(m) for m in chosen])
        return 0
    now = svc.now()
    width = shutil.get_terminal_size((120, 24)).columns
    id_width = max((len(m.id) for m in chosen), default=2)
    for m in chosen:
        head = (
            f"{STATUS_SYMBOL[m.status]} {m.importance:4.2f} {shorten(m.category, 11):<11} "
            f"{shorten(m.user_id or '-', 10):<10} {age_text(m.created_at, now):>4} "
            f"{one_line(m.id):<{id_width}}  "
        )
        print(head + shorten(one_line(m.content), max(10, width - len(head))))
    shown = f"{len(chosen)} of {len(store)} entries"
    print(shown, file=sys.stderr)
    return 0


@command(
    "show",
    "one entry: every field and the transactions that touched it",
    store=True,
    json=True,
    arguments=(arg("id", metavar="ID"),),
)
def cmd_show(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    from memtui.views import memory_record, transaction_record

    memory = store.find(args.id)
    touching = [tx for tx in store.transactions() if args.id in tx.memory_ids]
    if memory is None:
        if touching:
            last = touching[-1]
            raise MemtuiError(
                f"{args.id} is no longer in {store.path}: transaction {last.id} ({last.kind}) "
                f"removed it; `memtui history {store.path}` shows it, `memtui undo` restores it"
            )
        memory = store.get(args.id)
    undone = store.undone()
    if args.json:
        record = memory_record(memory)
        record["history"] = [transaction_record(tx, undone.get(tx.id)) for tx in touching]
        emit_json(record)
        return 0
    for key, value in memory_record(memory).items():
        if key in ("content", "extra"):
            continue
        if isinstance(value, list):
            value = ", ".join(map(str, value)) or "-"
        print(f"{key:>17}  {one_line(str('-' if value is None else value))}")
    for key, value in memory.extra.items():
        print(f"{one_line(key):>17}  {one_line(dumps_text(value, spaced=True))}")
    print()
    print(literal(memory.content))
    if touching:
        print()
        for tx in touching:
            print(f"  {tx_line(tx, undone.get(tx.id))}")
    return 0


def _split_tags(text: str) -> tuple[str, ...]:
    return tuple(t.strip() for t in text.split(",") if t.strip())


def _check_edit(args: argparse.Namespace) -> None:
    if args.status is not None:
        _one_status(args.status)
    check_fraction("--importance", args.importance)
    if args.content is not None and not args.content.strip():
        raise UsageError("--content must not be empty")


def _one_status(text: str) -> Status:
    from memtui.views import parse_statuses

    statuses = usage_checked(lambda: parse_statuses(text))
    if statuses is None or len(statuses) != 1:
        raise UsageError("--status takes one status")
    return next(iter(statuses))


@command(
    "edit",
    "change one entry (one transaction, undoable)",
    store=True,
    json=True,
    check=_check_edit,
    arguments=(
        arg("id", metavar="ID"),
        arg("--content", metavar="TEXT"),
        arg("--importance", type=float, metavar="X", help="0..1"),
        arg("--tags", metavar="a,b", help="replace the tags (empty: none)"),
        arg("--status", metavar="S", help="active, archived, deprecated, …"),
        arg("--reason", metavar="TEXT", help="why, for the ledger"),
    ),
)
def cmd_edit(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    from memtui.service.entry_edits import EntryEdit
    from memtui.views import transaction_detail

    status = _one_status(args.status) if args.status is not None else None
    tags = _split_tags(args.tags) if args.tags is not None else None
    edit = EntryEdit(args.content, args.importance, tags, status)
    tx = svc.entries.edit(store, args.id, edit, args.reason)
    if tx is None:
        print(f"{args.id}: nothing to change", file=sys.stderr)
        return 0
    if args.json:
        emit_json(transaction_detail(tx))
        return 0
    note = ""
    if status is not None and not store.traits.holds(status):
        kept = f"{store.format_name} keeps only {store.traits.kept} entries"
        note = f" ({kept}: it left the file; the ledger keeps it)"
    print_done(f"edited {one_line(args.id)} in transaction {tx.id}{note}", store, tx)
    return 0


def _check_add(args: argparse.Namespace) -> None:
    check_fraction("--importance", args.importance)
    if not args.content.strip():
        raise UsageError("the content must not be empty")


@command(
    "add",
    "add a memory by hand (one transaction, undoable)",
    store=True,
    json=True,
    check=_check_add,
    arguments=(
        arg("content", metavar="TEXT"),
        arg("--category", default="fact", metavar="C", help="default: fact"),
        arg("--importance", type=float, default=0.8, metavar="X", help="0..1 (0.8)"),
        arg("--tags", metavar="a,b"),
        arg("--user", metavar="USER", help="whose memory, where the store has users"),
        arg("--reason", metavar="TEXT", help="why, for the ledger"),
    ),
)
def cmd_add(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    from memtui.views import transaction_detail

    memory = svc.entries.new_memory(
        store,
        args.content,
        category=args.category,
        importance=args.importance,
        tags=_split_tags(args.tags or ""),
        user_id=args.user,
    )
    tx = svc.entries.add_memory(store, memory, args.reason)
    if args.json:
        emit_json(transaction_detail(tx))
        return 0
    print_done(f"added {memory.id} in transaction {tx.id}", store, tx)
    return 0


@command(
    "merge",
    "merge two or more entries by hand (one transaction)",
    store=True,
    json=True,
    arguments=(
        arg("ids", nargs="+", metavar="ID"),
        arg("--content", metavar="TEXT", help="the merged wording (default: by strategy)"),
        arg("--strategy", default="rule", choices=("rule", "keep-base")),
    ),
)
def cmd_merge(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    from memtui.views import entry_count, memory_record, transaction_record

    tx = svc.merges.merge(store, args.ids, strategy=args.strategy, content=args.content)
    merged = store.get(tx.details["merged"]) if store.find(tx.details["merged"]) else None
    if args.json:
        emit_json(
            {
                "transaction": transaction_record(tx),
                "merged": memory_record(merged) if merged else tx.details["merged"],
            }
        )
        return 0
    said = f"merged {entry_count(len(args.ids))} into {tx.details['merged']} (transaction {tx.id})"
    if merged is not None:
        said += f"\n  {one_line(merged.content)}"
    print_done(said, store, tx)
    return 0


@command(
    "supersede",
    "mark OLD as replaced by NEW",
    store=True,
    arguments=(
        arg("old", metavar="OLD_ID"),
        arg("new", metavar="NEW_ID"),
        arg("--reason", metavar="TEXT"),
    ),
)
def cmd_supersede(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    tx = svc.merges.supersede(store, args.old, args.new, args.reason or "")
    print_done(f"{args.new} now supersedes {args.old} (transaction {tx.id})", store, tx)
    return 0


def _check_restore(args: argparse.Namespace) -> None:
    if outside.wants_outside(args):
        outside.check_restore_outside(args)
    elif args.id is None:
        raise UsageError("give the entry id to restore, or --outside ID / --since DATE")


@command(
    "restore",
    "bring back a merged, superseded or archived entry",
    store=True,
    check=_check_restore,
    arguments=(arg("id", metavar="ID", nargs="?"), *outside.RESTORE_OPTIONS),
)
def cmd_restore(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    if outside.wants_outside(args):
        return outside.restore_outside(args, svc, store)
    tx = svc.merges.restore(store, args.id)
    print_done(f"{tx.reason} (transaction {tx.id})", store, tx)
    return 0


@command(
    "chain",
    "an entry's lineage: what it replaced and what replaced it",
    store=True,
    json=True,
    arguments=(arg("id", metavar="ID"),),
)
def cmd_chain(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    from memtui.views import shorten

    chain = svc.merges.lineage(store, args.id)
    if args.json:
        emit_json(chain.to_dict())
        return 0
    for label, ids in (("replaced", chain.supersedes), ("replaced by", chain.superseded_by)):
        for ident in ids:
            record = chain.records.get(ident)
            text = one_line(record.content) if record else "(not found)"
            status = record.status.value if record else "?"
            print(f"{label:>12}  {one_line(ident)} [{status}]  {shorten(text, 70)}")
    me = chain.records[chain.id]
    print(
        f"{'this':>12}  {one_line(chain.id)} [{me.status.value}]  "
        f"{shorten(one_line(me.content), 70)}"
    )
    for event in chain.events:
        tx = f"tx {event['tx']}" if event["tx"] else "source"
        print(
            f"  {event['at'][:19]}  {tx:<7} {event['actor']:<6} {event['kind']:<10} "
            f"{one_line(event['reason'])}"
        )
    return 0
