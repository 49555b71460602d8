"""PostgreSQL store figures, all from one run on a throwaway server (needs initdb/pg_ctl).

    python bench/postgres_bench.py [--size 100000] [--actions 10000]

- open: `PgStore.open` (server-side cursor, rows → Memory, side table, stamp) = first paint's
  data, on `--size` rows of the demo generator spread over 1,000 users.
- plan: the service's consolidation plan (longterm profile) over those rows.
- apply: one transaction changing `--actions` rows (each entry's importance), two ways:
  memtui's batched commit (COPY into a temporary table, one UPDATE … FROM, the outbox by COPY,
  ledger and before-images included) against the Go system's way, one `UPDATE … WHERE id AND
  version` round trip per row (plus its outbox inserts) in one transaction.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psycopg
from psycopg.types.json import Jsonb

from memtui.demo import make_demo_memories
from memtui.service import Service
from memtui.stores import Change
from memtui.stores.postgres import rows
from memtui.stores.postgres.pg_store import PgStore
from tests.pg_server import running_server

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def populate(dsn: str, size: int) -> None:
    memories = make_demo_memories(size, 1, NOW)
    with psycopg.connect(dsn) as conn, conn.cursor() as cur:
        names = list(rows.COLUMNS)
        with cur.copy(f"COPY long_term_memory ({', '.join(names)}) FROM STDIN") as out:
            for n, memory in enumerate(memories, start=1):
                m = memory.with_(id=str(n), supersedes=(), user_id=f"u{n % 1000}")
                row = rows.written({**rows.encode(m, None, NOW), "id": n}, 1, NOW)
                values = [rows.db_value(k, row[k]) for k in names]
                values[names.index("embedding")] = None
                out.write_row(values)
        cur.execute("SELECT setval(pg_get_serial_sequence('long_term_memory', 'id'), %s)", [size])
        conn.commit()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE long_term_memory")


def timed(what: str, fn):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - start
    print(f"  {what:<58} {elapsed:8.2f} s")
    return result


def go_way(dsn: str, changes: list[Change]) -> None:
    """One UPDATE per row (and its two outbox rows) in one transaction, as the Go code does."""
    with psycopg.connect(dsn) as conn, conn.cursor() as cur:
        ids = sorted(int(c.id) for c in changes)
        cur.execute(
            "SELECT id, version FROM long_term_memory WHERE id = ANY(%s) ORDER BY id FOR UPDATE",
            [ids],
        )
        for change in changes:
            assert change.after is not None and change.before is not None
            cur.execute(
                "UPDATE long_term_memory SET importance = %s, version = version + 1, "
                "updated_at = NOW() WHERE id = %s AND version = %s",
                [change.after.importance, int(change.id), change.before.version],
            )
            assert cur.rowcount == 1
            for kind, target in (
                ("upsert_memory_vector", "milvus"),
                ("upsert_memory_graph_node", "neo4j"),
            ):
                cur.execute(
                    "INSERT INTO memory_outbox (event_id, aggregate_id, user_id, "
                    "aggregate_version, event_type, target, payload) "
                    "VALUES (gen_random_uuid()::text, %s, 'u', %s, %s, %s, %s)",
                    [int(change.id), (change.before.version or 0) + 1, kind, target, Jsonb({})],
                )
        conn.commit()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--actions", type=int, default=10_000)
    args = parser.parse_args()
    with running_server() as server:
        dsn = server.create_database()
        print(f"PostgreSQL store, {args.size:,} rows of 1,000 users (one run)")
        timed("populate (COPY, not memtui)", lambda: populate(dsn, args.size))
        svc = Service()
        store: PgStore = timed("open: PgStore.open (first paint's data)", lambda: PgStore.open(dsn))
        assert len(store) == args.size
        plan = timed("plan (longterm profile)", lambda: svc.plan(store, svc.profile(store)))
        print(f"    {len(plan.actions):,} actions")
        timed("changed_on_disk (the TUI's poll)", store.changed_on_disk)

        memories = store.memories()
        first = memories[: args.actions]
        second = memories[args.actions : 2 * args.actions]
        batched = [Change(m, m.with_(importance=m.importance * 0.9, updated_at=NOW)) for m in first]
        per_row = [Change(m, m.with_(importance=m.importance * 0.9)) for m in second]
        timed(
            f"apply {len(batched):,} changes: memtui batched, one transaction",
            lambda: store.commit(batched, actor="plan", kind="plan", reason="bench", now=NOW),
        )
        timed(
            f"apply {len(per_row):,} changes: one UPDATE per row, one transaction",
            lambda: go_way(dsn, per_row),
        )
        store.close()


if __name__ == "__main__":
    main()
