"""The test session's PostgreSQL server itself: real, reachable, with the Go system's tables."""

from __future__ import annotations

import psycopg

from tests.pg_server import pg_dsn, pg_server  # noqa: F401


def test_the_server_is_real_and_holds_the_go_tables(pg_dsn: str) -> None:  # noqa: F811
    with psycopg.connect(pg_dsn) as conn:
        version = conn.execute("SHOW server_version").fetchone()
        tables = {
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
            )
        }
    assert version is not None and version[0][0].isdigit()
    assert tables == {"long_term_memory", "memory_outbox"}
