"""PostgreSQL store figures, all from one run on a throwaway server (needs initdb/pg_ctl).

    python bench/postgres_bench.py [--size 100000] [--actions 10000] [--dims 0]
        [--baseline DIR] [--skip-plan]

- open: `PgStore.open` (server-side cursor, rows → Memory, side table, stamp) = first paint's
  data, on `--size` rows of the demo generator spread over 1,000 users (`--dims N`: each row
  with an N-number embedding), each open in a fresh process (time and its peak RSS), twice,
  alternating with the same open by the memtui in `--baseline DIR` (a checkout holding
  `memtui/`, e.g. `git archive main memtui | tar -x -C DIR`) when given.
- plan: the service's consolidation plan (longterm profile) over those rows.
- apply: one transaction changing `--actions` rows (each entry's importance): memtui's whole
  commit (hashes, ledger images, before-images, outbox); then the same row and outbox writes
  two ways on fresh rows, the Go system's (one `UPDATE … WHERE id AND version` round trip per
  row plus its outbox inserts) against memtui's batching (COPY into a temporary table, one
  `UPDATE … FROM`, the outbox by COPY).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
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
from memtui.stores.postgres.shape import Shape
from tests.pg_server import running_server

NOW = datetime(2026, 11, 30, tzinfo=UTC)


GO = Shape.of_go()


def populate(dsn: str, size: int, dims: int = 0) -> None:
    memories = make_demo_memories(size, 1, NOW)
    spread = [((k * 7919) % 1000) / 1000 - 0.5 for k in range(dims + 997)]
    with psycopg.connect(dsn) as conn, conn.cursor() as cur:
        names = list(rows.COLUMNS)
        with cur.copy(f"COPY long_term_memory ({', '.join(names)}) FROM STDIN") as out:
            for n, memory in enumerate(memories, start=1):
                m = memory.with_(id=str(n), supersedes=(), user_id=f"u{n % 1000}")
                row = rows.written({**rows.encode(m, None, NOW), "id": n}, 1, NOW)
                values = [GO.db_value(k, row[k]) for k in names]
                emb = Jsonb(spread[n % 997 : n % 997 + dims]) if dims else None
                values[names.index("embedding")] = emb
                out.write_row(values)
        cur.execute("SELECT setval(pg_get_serial_sequence('long_term_memory', 'id'), %s)", [size])
        conn.commit()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE long_term_memory")


_OPEN = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from memtui.stores.postgres.pg_store import PgStore
start = time.perf_counter()
store = PgStore.open(sys.argv[2])
elapsed = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps([elapsed, peak, len(store)]))
"""


def open_in_child(code: Path, dsn: str) -> tuple[float, int, int]:
    """`PgStore.open` in a fresh interpreter importing memtui from `code`: seconds, peak RSS."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", _OPEN, str(code), dsn],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    elapsed, peak, count = json.loads(done.stdout)
    return float(elapsed), int(peak), int(count)


def compare_opens(dsn: str, size: int, baseline: Path | None) -> None:
    here = Path(__file__).resolve().parent.parent
    codes = [("this branch", here)] + ([("baseline", baseline)] if baseline else [])
    for round_ in (1, 2):
        for name, code in codes:
            elapsed, peak, count = open_in_child(code, dsn)
            assert count == size
            label = f"open #{round_}, {name} (fresh process)"
            print(f"  {label:<58} {elapsed:8.2f} s  peak RSS {peak / 2**20:7,.0f} MiB")


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
    parser.add_argument("--dims", type=int, default=0, help="embedding numbers per row")
    parser.add_argument("--baseline", type=Path, help="a checkout of memtui to compare opens")
    parser.add_argument("--skip-plan", action="store_true")
    args = parser.parse_args()
    with running_server() as server:
        dsn = server.create_database()
        dims = f", embeddings of {args.dims} numbers" if args.dims else ""
        print(f"PostgreSQL store, {args.size:,} rows of 1,000 users{dims} (one run)")
        timed("populate (COPY, not memtui)", lambda: populate(dsn, args.size, args.dims))
        compare_opens(dsn, args.size, args.baseline)
        svc = Service()
        store: PgStore = timed("open: PgStore.open (in this process)", lambda: PgStore.open(dsn))
        assert len(store) == args.size
        if not args.skip_plan:
            plan = timed(
                "plan (longterm profile)",
                lambda: svc.plans.plan(store, svc.profiles.profile(store)),
            )
            print(f"    {len(plan.actions):,} actions")
        timed(
            "the TUI's poll, exact (scans the table; 1st, then every 10th)", store.changed_on_disk
        )
        timed("the TUI's poll, when the write counters did not move", store.changed_on_disk)

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
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  peak RSS of this process (open, plan, apply) {peak:,.0f} MiB")


if __name__ == "__main__":
    main()
