"""PostgreSQL store figures, all from one run on a throwaway server (needs initdb/pg_ctl).

    python bench/postgres_bench.py [--size 100000] [--actions 10000]

- open: `PgStore.open` (server-side cursor, rows → Memory, side table, stamp) = first paint's
  data, on `--size` rows of the demo generator spread over 1,000 users.
- plan: the service's consolidation plan (longterm profile) over those rows.
- apply: one transaction changing `--actions` rows (each entry's importance): memtui's whole
  commit (hashes, ledger images, before-images, outbox); then the same row and outbox writes
  two ways on fresh rows, the Go system's (one `UPDATE … WHERE id AND version` round trip per
  row plus its outbox inserts) against memtui's batching (COPY into a temporary table, one
  `UPDATE … FROM`, the outbox by COPY).
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
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


def batched_way(dsn: str, changes: list[Change]) -> None:
    """The same writes as `go_way`, batched as memtui writes: COPY into a temporary table, one
    UPDATE … FROM guarded by the versions, the outbox by COPY."""
    with psycopg.connect(dsn) as conn, conn.cursor() as cur:
        ids = sorted(int(c.id) for c in changes)
        cur.execute(
            "SELECT id, version FROM long_term_memory WHERE id = ANY(%s) ORDER BY id FOR UPDATE",
            [ids],
        )
        cur.execute(
            "CREATE TEMPORARY TABLE stage (id INT, importance FLOAT8, old_version BIGINT) "
            "ON COMMIT DROP"
        )
        with cur.copy("COPY stage FROM STDIN") as out:
            for change in changes:
                assert change.after is not None and change.before is not None
                out.write_row([int(change.id), change.after.importance, change.before.version])
        cur.execute(
            "UPDATE long_term_memory AS t SET importance = s.importance, version = t.version + 1, "
            "updated_at = NOW() FROM stage AS s WHERE t.id = s.id AND t.version = s.old_version"
        )
        assert cur.rowcount == len(changes)
        columns = "event_id, aggregate_id, user_id, aggregate_version, event_type, target, payload"
        with cur.copy(f"COPY memory_outbox ({columns}) FROM STDIN") as out:
            for change in changes:
                assert change.before is not None
                for kind, target in (
                    ("upsert_memory_vector", "milvus"),
                    ("upsert_memory_graph_node", "neo4j"),
                ):
                    version = (change.before.version or 0) + 1
                    event = [str(uuid.uuid4()), int(change.id), "u", version, kind, target]
                    out.write_row([*event, Jsonb({})])
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
        n = args.actions
        full, per_row, batched = (memories[k * n : (k + 1) * n] for k in range(3))
        changes = [Change(m, m.with_(importance=m.importance * 0.9, updated_at=NOW)) for m in full]
        timed(
            f"apply {n:,}: memtui's commit (ledger, backups, hashes, outbox)",
            lambda: store.commit(changes, actor="plan", kind="plan", reason="bench", now=NOW),
        )
        print(f"  the same row + outbox writes, {n:,} rows, one transaction each way:")
        timed(
            "    one UPDATE + 2 outbox INSERTs per row (the Go system's way)",
            lambda: go_way(dsn, [Change(m, m.with_(importance=0.1)) for m in per_row]),
        )
        timed(
            "    batched: COPY, one UPDATE … FROM, outbox by COPY (memtui's way)",
            lambda: batched_way(dsn, [Change(m, m.with_(importance=0.1)) for m in batched]),
        )
        store.close()


if __name__ == "__main__":
    main()
