"""The `memtui` command: thin argument handling over the core; text or `--json` output.

Errors a user can cause print one line `memtui: ...` on stderr and exit 1; usage errors (bad
option values too) exit 2.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from memtui import __version__, interrupts, locations
from memtui.cli import curate as cli_curate
from memtui.cli import outside as cli_outside
from memtui.cli.common import (
    UsageError,
    check_fraction,
    emit_json,
    print_done,
    readable_output,
    redecode_text,
    usage_checked,
)
from memtui.demo import DEFAULT_SIZE as DEFAULT_DEMO_SIZE
from memtui.errors import MemtuiError
from memtui.gcpause import gc_paused
from memtui.model import STATUS_SYMBOL
from memtui.service import DEMO_MAX_SIZE, EntryEdit, Service
from memtui.stores.transfer import EXPORT_FORMATS
from memtui.textsafe import literal, one_line
from memtui.times import format_iso
from memtui.views import (
    age_text,
    backup_record,
    counted,
    entry_count,
    memory_record,
    parse_statuses,
    select,
    shorten,
    store_stats,
    transaction_detail,
    transaction_record,
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        print(f"memtui: {message}", file=sys.stderr)
        raise SystemExit(2)


# -- commands ---------------------------------------------------------------------------------


def cmd_demo(args: argparse.Namespace, svc: Service) -> int:
    if args.size is not None and not 1 <= args.size <= DEMO_MAX_SIZE:
        raise UsageError(f"--size must be between 1 and {DEMO_MAX_SIZE}")
    path = Path(args.out).expanduser() if args.out else None
    if args.format in ("hermes", "hermes-folder"):
        if args.size is not None or args.seed is not None:
            raise UsageError("--size and --seed make the native demo; the Hermes demo is fixed")
        whole = args.format == "hermes-folder"
        store = svc.stores.hermes_demo(path, fresh=args.fresh, whole=whole)
        print(
            f"demo store: {store.path} ({len(store)} entries, hermes-folder format: MEMORY.md "
            "and USER.md as users memory and user)"
            if whole
            else f"demo store: {store.path} ({len(store)} entries, hermes format; "
            f"USER.md beside it: memtui {store.path.with_name('USER.md')})"
        )
    elif args.format == "claude-code":
        if args.size is not None or args.seed is not None:
            raise UsageError(
                "--size and --seed make the native demo; the Claude Code demo is fixed"
            )
        store = svc.stores.claude_demo(path, fresh=args.fresh)
        print(f"demo store: {store.path} ({len(store)} memory files, claude-code format)")
    else:
        store = svc.stores.demo(path, size=args.size, seed=args.seed, fresh=args.fresh)
        print(f"demo store: {store.path} ({len(store)} entries, native format)")
    if args.no_tui:
        return 0
    return _run_tui(str(store.path), svc)


def cmd_label(args: argparse.Namespace, svc: Service) -> int:
    """`memtui label STORE` opens the labelling screen; with ids (and a verdict) it labels."""
    if args.ids or args.same or args.different:
        return cli_curate.cmd_label(args, svc)
    return _run_tui(str(svc.stores.open(args.store).path), svc, start_screen="label")


def _to_the_second(iso: str) -> str:
    """`2026-08-01T13:25:45.71Z` as `2026-08-01T13:25:45Z`: one precision for people to read."""
    return re.sub(r"\.\d+Z$", "Z", iso)


def cmd_stats(args: argparse.Namespace, svc: Service) -> int:
    store = svc.stores.open(args.store)
    stats = store_stats(store)
    since = cli_outside.look(svc, store)
    if args.json:
        emit_json({**stats, **cli_outside.stats_fields(since)})
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
            pairs = ", ".join(f"{one_line(str(k))} {v}" for k, v in stats[key].items())
            print(f"  {label:<11} {pairs}")
    if stats["oldest"]:
        oldest, newest = (_to_the_second(stats[k]) for k in ("oldest", "newest"))
        print(f"  created     {oldest} … {newest}")
    print(
        f"  ledger      {counted(stats['transactions'], 'transaction')}, "
        f"{counted(stats['backups'], 'backup')}"
    )
    for finding in stats["findings"]:
        print(f"  finding     {literal(finding)}")
    if since is not None:
        print(f"  {since.line}")
    return 0


def cmd_list(args: argparse.Namespace, svc: Service) -> int:
    store = svc.stores.open(args.store)
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


def cmd_show(args: argparse.Namespace, svc: Service) -> int:
    store = svc.stores.open(args.store)
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
        print(f"{one_line(key):>17}  {one_line(json.dumps(value, ensure_ascii=False))}")
    print()
    print(literal(memory.content))
    if touching:
        print()
        for tx in touching:
            print(f"  {_tx_line(tx, undone.get(tx.id))}")
    return 0


def _split_tags(text: str) -> tuple[str, ...]:
    return tuple(t.strip() for t in text.split(",") if t.strip())


def cmd_add(args: argparse.Namespace, svc: Service) -> int:
    check_fraction("--importance", args.importance)
    if not args.content.strip():
        raise UsageError("the content must not be empty")
    store = svc.stores.open(args.store)
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


def cmd_edit(args: argparse.Namespace, svc: Service) -> int:
    status = None
    if args.status is not None:
        statuses = usage_checked(lambda: parse_statuses(args.status))
        if statuses is None or len(statuses) != 1:
            raise UsageError("--status takes one status")
        status = next(iter(statuses))
    tags = None
    if args.tags is not None:
        tags = _split_tags(args.tags)
    check_fraction("--importance", args.importance)
    if args.content is not None and not args.content.strip():
        raise UsageError("--content must not be empty")
    store = svc.stores.open(args.store)
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


def cmd_history(args: argparse.Namespace, svc: Service) -> int:
    if args.limit is not None and args.limit < 1:
        raise UsageError("--limit must be 1 or more")
    store = svc.stores.open(args.store)
    undone = store.undone()
    history = cli_outside.with_outside_events(svc, store, store.history())
    if args.limit is not None:
        history = history[: args.limit]
    if args.json:
        emit_json([transaction_record(tx, cli_outside.undone_by(tx, undone)) for tx in history])
        return 0
    if not history:
        print("no transactions yet", file=sys.stderr)
    for tx in history:
        print(cli_outside.history_line(tx) or _tx_line(tx, undone.get(tx.id)))
    return 0


def _tx_line(tx: Any, undone_by: int | None) -> str:
    when = format_iso(tx.at.replace(microsecond=0))
    touched = entry_count(len(tx.changes))
    tail = f"  [undone by {undone_by}]" if undone_by else ""
    return (
        f"{tx.id:>5}  {when}  {tx.actor:<5} {tx.kind:<9} {touched:<11} {one_line(tx.reason)}{tail}"
    )


def cmd_undo(args: argparse.Namespace, svc: Service) -> int:
    store = svc.stores.open(args.store)
    if args.with_later:
        if args.tx is None:
            raise UsageError(
                "--with-later needs the transaction id: memtui undo STORE N --with-later"
            )
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


def cmd_compact(args: argparse.Namespace, svc: Service) -> int:
    if args.keep is not None and args.keep < 1:
        raise UsageError("--keep must be at least 1 (transaction ids go on from the newest)")
    if args.days is not None and args.days < 0:
        raise UsageError("--days cannot be negative")
    store = svc.stores.open(args.store)
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


def cmd_backups(args: argparse.Namespace, svc: Service) -> int:
    store = svc.stores.open(args.store)
    backups = svc.history.backups(store)
    if args.json:
        emit_json([backup_record(b) for b in backups])
        return 0
    if not backups:
        print("no backups yet (one is kept before each change)", file=sys.stderr)
    for n, b in enumerate(backups, start=1):
        print(f"{n:>3}  {b.name}  {b.size:>12,} bytes  before transaction {b.tx_id}")
    return 0


def cmd_backup(args: argparse.Namespace, svc: Service) -> int:
    store = svc.stores.open(args.store)
    dest = Path(args.dest).expanduser()
    count = svc.history.copy_table(store, dest)
    print(f"copied {count} rows of {store.path} to {dest} (Go records, JSON Lines)")
    return 0


def cmd_rollback(args: argparse.Namespace, svc: Service) -> int:
    if (args.backup is None) == (args.source is None):
        raise UsageError("give a backup name or --from FILE (one of them)")
    store = svc.stores.open(args.store)
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


def cmd_import(args: argparse.Namespace, svc: Service) -> int:
    source = svc.stores.open(args.src)
    dest = Path(args.dest).expanduser()
    store = svc.stores.import_store(source, dest)
    print(f"imported {len(store)} entries from {source.format_name} store into {dest} (native)")
    return 0


def cmd_export(args: argparse.Namespace, svc: Service) -> int:
    store = svc.stores.open(args.store)
    report = svc.stores.export(store, Path(args.dest).expanduser(), args.format)
    print(f"exported {report.written} entries to {report.path} ({report.format})")
    if report.dropped:
        print(
            f"left out {report.dropped} entries that are not active (pi keeps active entries only)"
        )
    if report.renumbered:
        print("ids renumbered 1..n for the Go store; the old id is kept as memtui_id")
    if report.as_fact:
        shown = ", ".join(f"{c} {n}" for c, n in sorted(report.as_fact.items()))
        print(f"written as pi's type fact (pi has no such category): {one_line(shown)}")
    return 0


def cmd_doctor(args: argparse.Namespace, svc: Service) -> int:
    store = svc.stores.open(args.store, warn=False)
    problems = svc.stores.problems(store)
    if (problems or svc.stores.leftovers(store)) and args.fix:
        for line in svc.stores.repair(store):
            print(literal(line))
        store = svc.stores.open(args.store, warn=False)
        problems = svc.stores.problems(store)
    leftovers = svc.stores.leftovers(store)
    for line in svc.stores.findings(store):
        print(f"finding: {literal(line)}")
    for line in leftovers:
        print(f"leftover: {literal(line)}")
    if not problems:
        print(
            f"{literal(str(store.path))}: no problems found ({store.format_name} store, "
            f"{counted(len(store.transactions()), 'transaction')}, "
            f"{counted(len(store.backups()), 'backup')})"
        )
        if leftovers:
            print("`memtui doctor STORE --fix` reclaims the leftovers (harmless meanwhile)")
        return 0
    for line in problems:
        print(literal(line))
    hint = "these need a hand" if args.fix else "`--fix` repairs what it can"
    print(f"memtui changes nothing in this store until they are repaired; {hint}")
    return 1


def cmd_locate(args: argparse.Namespace, svc: Service) -> int:
    places = {
        "config": str(svc.settings.path or locations.config_file()),
        "data": str(locations.data_dir()),
        "demo_store": str(locations.demo_store()),
        "hermes_demo": str(locations.hermes_demo()),
        "claude_demo": str(locations.claude_demo()),
        "default_store": str(locations.default_native_store()),
        "pi_store": str(locations.pi_store()),
    }
    if args.json:
        emit_json(places)
    else:
        for key, value in places.items():
            print(f"{key:<14} {value}")
    return 0


# -- plumbing ---------------------------------------------------------------------------------


def _run_tui(store: str | None, svc: Service, start_screen: str | None = None) -> int:
    from memtui.tui import check_keymap

    problems = check_keymap(svc.settings)
    if problems:
        raise UsageError("\n".join(f"memtui: {p}" for p in problems).removeprefix("memtui: "))
    shown = svc.stores.shown_location(store) if store else None
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        target = shown or "STORE"
        print(
            f"memtui: not a terminal, so no UI; run `memtui {target}` in a terminal, "
            f"or use `memtui stats {target}` and `memtui list {target}`",
            file=sys.stderr,
        )
        return 0 if store else 1
    from memtui.tui import run_app

    return run_app(store, svc, start_screen)


Command = Callable[[argparse.Namespace, Service], int]


@functools.cache  # one parser per process: building it costs more than most commands
def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="memtui",
        description=(
            "See and safely change AI agents' long-term memory stores (pi memory-store.json, "
            "Go long-term memory JSON/JSONL, memtui's own TinyDB store). Every change is one "
            "transaction with a backup and a ledger entry, and can be undone. "
            "`memtui [STORE]` opens the terminal UI."
        ),
    )
    parser.add_argument("--version", action="version", version=f"memtui {__version__}")
    parser.add_argument(
        "--config", metavar="PATH", help="config file (default: see `memtui locate`)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def command(
        name: str, func: Command, help_text: str, *, json_flag: bool = True, store: bool = True
    ) -> _Parser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(func=func)
        if json_flag:
            p.add_argument("--json", action="store_true", help="print JSON (docs/design.md)")
        return p

    p = command("demo", cmd_demo, "write a realistic demo store and open it", json_flag=False)
    p.add_argument("--out", metavar="PATH", help="where to write it (default: see `memtui locate`)")
    p.add_argument(
        "--format",
        choices=("native", "hermes", "hermes-folder", "claude-code"),
        default="native",
        help="native (default); hermes: Hermes Agent's MEMORY.md and USER.md in the folder PATH; "
        "hermes-folder: the same folder opened as one store; "
        "claude-code: a Claude Code memory folder PATH",
    )
    p.add_argument("--size", type=int, metavar="N", help=f"entries (default {DEFAULT_DEMO_SIZE})")
    p.add_argument("--seed", type=int, metavar="S", help="random seed (default 7)")
    p.add_argument("--fresh", action="store_true", help="regenerate even if the demo store exists")
    p.add_argument("--no-tui", action="store_true", help="only write the store and print its path")

    p = command("stats", cmd_stats, "counts by status, category, source and user")
    p.add_argument("store", metavar="STORE")

    p = command("list", cmd_list, "list entries, filtered and sorted")
    p.add_argument("store", metavar="STORE")
    p.add_argument("--status", metavar="S", help="visible (default), all, or statuses a,b")
    p.add_argument("--user", metavar="U", help="only this user's entries")
    p.add_argument("--query", metavar="TEXT", help="substring of content, tags, id or category")
    p.add_argument("--sort", metavar="FIELD", help="importance, created, used, accesses, …")
    p.add_argument("--desc", action="store_true", help="sort descending")
    p.add_argument("--limit", type=int, metavar="N", help="at most N entries")

    p = command("show", cmd_show, "one entry: every field and the transactions that touched it")
    p.add_argument("store", metavar="STORE")
    p.add_argument("id", metavar="ID")

    p = command("edit", cmd_edit, "change one entry (one transaction, undoable)")
    p.add_argument("store", metavar="STORE")
    p.add_argument("id", metavar="ID")
    p.add_argument("--content", metavar="TEXT")
    p.add_argument("--importance", type=float, metavar="X", help="0..1")
    p.add_argument("--tags", metavar="a,b", help="replace the tags (empty: none)")
    p.add_argument("--status", metavar="S", help="active, archived, deprecated, …")
    p.add_argument("--reason", metavar="TEXT", help="why, for the ledger")

    p = command("add", cmd_add, "add a memory by hand (one transaction, undoable)")
    p.add_argument("store", metavar="STORE")
    p.add_argument("content", metavar="TEXT")
    p.add_argument("--category", default="fact", metavar="C", help="default: fact")
    p.add_argument("--importance", type=float, default=0.8, metavar="X", help="0..1 (0.8)")
    p.add_argument("--tags", metavar="a,b")
    p.add_argument("--user", metavar="USER", help="whose memory, where the store has users")
    p.add_argument("--reason", metavar="TEXT", help="why, for the ledger")

    p = command("history", cmd_history, "transactions in the ledger, newest first")
    p.add_argument("store", metavar="STORE")
    p.add_argument("--limit", type=int, metavar="N")

    p = command("undo", cmd_undo, "revert a transaction (default: the newest not undone)")
    p.add_argument("store", metavar="STORE")
    p.add_argument("tx", type=int, nargs="?", metavar="TX_ID")
    p.add_argument(
        "--with-later",
        action="store_true",
        help="undo the later transactions that changed the same entries too, as one",
    )

    p = command("compact", cmd_compact, "shrink a native store's journal (undo kept)")
    p.add_argument("store", metavar="STORE")
    limit = p.add_mutually_exclusive_group()
    limit.add_argument("--keep", type=int, metavar="N", help="keep the newest N transactions")
    limit.add_argument("--days", type=float, metavar="D", help="keep the last D days")

    p = command("backups", cmd_backups, "the rolling backups kept beside the store")
    p.add_argument("store", metavar="STORE")

    p = command("backup", cmd_backup, "copy a PostgreSQL store's table to a file", json_flag=False)
    p.add_argument("store", metavar="STORE")
    p.add_argument("dest", metavar="DEST")

    p = command("rollback", cmd_rollback, "make the store what a backup holds (undoable)")
    p.add_argument("store", metavar="STORE")
    p.add_argument(
        "backup", metavar="BACKUP", nargs="?", help="backup name, a unique prefix, or 1 = newest"
    )
    p.add_argument(
        "--from",
        dest="source",
        metavar="FILE",
        help="a PostgreSQL store: the copy `memtui backup` wrote to FILE",
    )

    p = command("import", cmd_import, "copy any store into a new native store", json_flag=False)
    p.add_argument("src", metavar="SRC")
    p.add_argument("dest", metavar="DEST")

    p = command("export", cmd_export, "write the store to a new file in a format", json_flag=False)
    p.add_argument("store", metavar="STORE")
    p.add_argument("dest", metavar="DEST")
    p.add_argument("--format", required=True, choices=EXPORT_FORMATS)

    cli_curate.add_commands(command)
    cli_outside.add_commands(command)
    sub.choices["label"].set_defaults(func=cmd_label)
    p = command(
        "doctor", cmd_doctor, "what is wrong with a store's ledger and sidecar", json_flag=False
    )
    p.add_argument("store", metavar="STORE")
    p.add_argument(
        "--fix", action="store_true", help="move damaged ledger entries aside (nothing is deleted)"
    )
    command("locate", cmd_locate, "where memtui keeps its config and data")
    return parser


def command_names(parser: argparse.ArgumentParser) -> list[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices)
    return []


def main(argv: Sequence[str] | None = None) -> int:
    readable_output()
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    commands = set(command_names(parser))
    try:
        tui = _tui_arguments(args_list, commands)
        if tui is not None:
            store, config_flag = tui
            return _run_tui(store, Service.from_config(config_flag))
        args = parser.parse_args(args_list)
        redecode_text(args)
        # `plan --config FILE` (older spelling) means the same as `--config FILE plan`
        svc = Service.from_config(getattr(args, "profile_config", None) or args.config)
        if args.command is None:
            return _run_tui(None, svc)
        # a short-lived command: no cyclic collections over its records
        # the process exits next when it runs as `memtui`: a signal then waits for the exit
        with interrupts.installed(restore=argv is not None), gc_paused():
            code = int(args.func(args, svc))
            # past a commit point signals wait until the command is done (interrupts)
            late = interrupts.late()
            if late is not None:
                print(
                    f"memtui: {interrupts.name(late)} came after the change was committed; it "
                    "stands as reported",
                    file=sys.stderr,
                )
            for line in svc.stores.sidecar_warnings():
                print(line, file=sys.stderr)
        return code
    except UsageError as e:
        print(f"memtui: {e}", file=sys.stderr)
        return 2
    except MemtuiError as e:
        print(f"memtui: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        # raised only before a commit point: once one is passed, signals wait (interrupts)
        print("memtui: interrupted: nothing was written", file=sys.stderr)
        return e.exit_code if isinstance(e, interrupts.Interrupted) else 130
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except OSError as e:  # a write point below that does not say it itself
        where = f"{e.filename}: " if e.filename else ""
        print(f"memtui: {where}{e.strerror or e}", file=sys.stderr)
        return 1


def _tui_arguments(argv: list[str], commands: set[str]) -> tuple[str | None, str | None] | None:
    """`memtui [--config P] [STORE]` opens the TUI: (the store or None, the `--config` value);
    None for any other command line."""
    rest, flag = list(argv), None
    if len(rest) >= 2 and rest[0] == "--config":
        flag, rest = rest[1], rest[2:]
    elif rest and rest[0].startswith("--config="):
        flag, rest = rest[0].removeprefix("--config="), rest[1:]
    if not rest:
        return None, flag
    if len(rest) == 1 and not rest[0].startswith("-") and rest[0] not in commands:
        return rest[0], flag
    return None


if __name__ == "__main__":
    raise SystemExit(main())
