"""The commands about what the agent changed outside memtui: `watch`, `outside`, the
`--outside`/`--since` options of `restore`, the "since you last looked" line of `stats` and the
agent's events in `history`."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any

from memtui.cli.common import UsageError, emit_json, print_done
from memtui.cli.registry import arg, command
from memtui.errors import MemtuiError
from memtui.textsafe import literal, one_line
from memtui.times import format_iso

if TYPE_CHECKING:
    from memtui.service import Service
    from memtui.service.outside import OutsideChange, SinceLooked
    from memtui.stores.ledger import Transaction
    from memtui.stores.protocol import MemoryStore


def _content(image: dict[str, Any] | None) -> str:
    return one_line(str(image.get("content", ""))) if image else "—"


def change_record(c: OutsideChange) -> dict[str, Any]:
    return {
        "id": c.id,
        "kind": c.kind,
        "at": format_iso(c.at),
        "event": c.event,
        "before": c.before,
        "after": c.after,
    }


@command(
    "outside",
    "what the agent changed since you last looked",
    store=True,
    json=True,
    arguments=(
        arg("--since", metavar="DATE", help="since DATE (RFC 3339) instead"),
        arg("--all", action="store_true", help="everything the record holds"),
    ),
)
def cmd_outside(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    from memtui.service.base import parse_time

    since = parse_time(args.since, "--since") if args.since else None
    changes = svc.outside.changes(store, since=since, looked=not args.all and not since)
    if args.json:
        emit_json([change_record(c) for c in changes])
        return 0
    if not changes:
        print(
            "the agent changed nothing " + ("since then" if since else "in the record")
            if since or args.all
            else "the agent changed nothing since you last looked",
            file=sys.stderr,
        )
    for c in changes:
        when = format_iso(c.at.replace(microsecond=0))
        print(f"{c.kind:<8} {one_line(c.id):<14} {when}  event a{c.event}")
        if c.before is not None:
            print(f"  before: {_content(c.before)[:160]}")
        if c.after is not None:
            print(f"  after:  {_content(c.after)[:160]}")
    return 0


def _check_watch(args: argparse.Namespace) -> None:
    if not 0 < args.poll <= 3600:  # nan and inf too
        raise UsageError("--poll must be more than 0 and at most 3600 seconds")


@command(
    "watch",
    "record every change an agent makes, until stopped",
    json=True,
    check=_check_watch,
    arguments=(
        arg("stores", metavar="STORE", nargs="+"),
        arg(
            "--poll",
            type=float,
            default=2.0,
            metavar="SECONDS",
            help="how often a database (and a file whose events were missed) is checked (2)",
        ),
    ),
)
def cmd_watch(args: argparse.Namespace, svc: Service) -> int:
    stores = [svc.stores.open(s) for s in args.stores]
    stop = threading.Event()

    def report(store: MemoryStore, event: Transaction) -> None:
        if args.json:
            record: dict[str, Any] = {
                "store": str(store.path),
                "event": event.id,
                "at": format_iso(event.at),
            }
            for c in _changes(event):
                record.setdefault(c.kind, []).append(c.id)
            print(literal_json({**record, "fingerprint": store.fingerprint}), flush=True)
        else:
            when = format_iso(event.at.replace(microsecond=0))
            print(f"{when}  {literal(str(store.path))}: {event.reason} (event a{event.id})")
            sys.stdout.flush()

    def ready() -> None:
        if not args.json:
            names = ", ".join(literal(str(s.path)) for s in stores)
            print(f"watching {names} (stop with Ctrl-C)", flush=True)
        else:
            print(literal_json({"watching": [str(s.path) for s in stores]}), flush=True)

    def stop_now(signum: int, frame: object) -> None:
        stop.set()

    stopping = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    before = {s: signal.signal(s, stop_now) for s in stopping}
    try:
        svc.outside.watch(stores, stop, report, ready=ready, poll=args.poll)
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
    if not args.json:
        print("stopped watching", file=sys.stderr)
    return 0


def literal_json(value: Any) -> str:
    from memtui.jsonout import dumps_text

    return dumps_text(value)


def _changes(event: Transaction) -> list[OutsideChange]:
    from memtui.service.outside import OutsideChange

    return [
        OutsideChange(c.id, c.before, c.after, c.before_raw, c.position, event.at, event.id)
        for c in event.changes
    ]


def wants_outside(args: argparse.Namespace) -> bool:
    return bool(args.outside or args.since)


def check_restore_outside(args: argparse.Namespace) -> None:
    if args.id is not None:
        raise UsageError("give an entry id, or --outside ID / --since DATE, not both")
    if args.outside and args.since:
        raise UsageError("give --outside ID or --since DATE, not both")


def restore_outside(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    """`memtui restore STORE --outside ID` / `--since DATE` (checked by `check_restore_outside`)."""
    from memtui.service.base import parse_time

    since = parse_time(args.since, "--since") if args.since else None
    tx = svc.outside.restore(store, args.outside or (), since=since)
    print_done(f"{tx.reason} (transaction {tx.id})", store, tx)
    return 0


RESTORE_OPTIONS = (
    arg(
        "--outside",
        action="append",
        metavar="ID",
        help="bring back entry ID as it was before the agent changed or removed it (repeatable)",
    ),
    arg("--since", metavar="DATE", help="bring back all the agent removed or rewrote since DATE"),
)


def look(svc: Service, store: MemoryStore) -> SinceLooked | None:
    """What the agent changed since the person last looked (now they have); None also where
    the record cannot be kept (a read-only folder): the command works all the same."""
    try:
        return svc.outside.look(store)
    except (MemtuiError, OSError):
        return None


def stats_fields(since: SinceLooked | None) -> dict[str, Any]:
    from memtui.service.outside import counts

    if since is None:
        return {"since_last_looked": None}
    return {
        "since_last_looked": {"looked_at": format_iso(since.looked_at), **counts(since.changes)}
    }


def with_outside_events(svc: Service, store: MemoryStore, history: list[Transaction]) -> list[Any]:
    """memtui's transactions (newest first) with the agent's outside events among them (what
    the agent changed since memtui last saw the store recorded first)."""
    from memtui.service.outside import AGENT

    outside = svc.outside
    try:
        outside.catch_up(store)
        events = outside.events(store, archived=True)
    except (MemtuiError, OSError):
        return history
    merged = [*history, *events]
    merged.sort(key=lambda t: (t.at, t.actor != AGENT), reverse=True)
    return merged


def is_outside(tx: Transaction) -> bool:
    from memtui.service.outside import AGENT

    return tx.actor == AGENT


def undone_by(tx: Transaction, undone: dict[int, int]) -> int | None:
    return None if is_outside(tx) else undone.get(tx.id)


def history_line(tx: Transaction) -> str | None:
    """An outside event's line in `memtui history` (None: one of memtui's own)."""
    from memtui.service.outside import AGENT

    if not is_outside(tx):
        return None
    when = format_iso(tx.at.replace(microsecond=0))
    n = len(tx.changes)
    touched = f"{n} entr{'y' if n == 1 else 'ies'}"
    return f"{'a' + str(tx.id):>5}  {when}  {AGENT:<5} {'outside':<9} {touched:<11} {tx.reason}"
