"""A throwaway PostgreSQL server for the tests and the benchmark: `initdb` in a temporary folder,
`pg_ctl start` on a free loopback port (as the `postgres` system user when running as root,
which PostgreSQL refuses), one fresh database per test, the Go system's tables from
docs/formats.md, `postgres`, and `pg_ctl stop` at the end.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

# The Go system's tables, with their types (docs/formats.md, `postgres`).
GO_SCHEMA = """
CREATE TABLE long_term_memory (
    id SERIAL PRIMARY KEY,
    user_id TEXT,
    content TEXT NOT NULL,
    importance DOUBLE PRECISION NOT NULL DEFAULT 0.5,
    embedding JSONB,
    embedding_model TEXT NOT NULL DEFAULT '',
    embedding_revision TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMP DEFAULT NOW(),
    last_accessed TIMESTAMP DEFAULT NOW(),
    updated_at TIMESTAMP DEFAULT NOW(),
    category TEXT NOT NULL DEFAULT 'general',
    tags TEXT[] NOT NULL DEFAULT '{}',
    slot_hint TEXT,
    quarantined BOOLEAN NOT NULL DEFAULT FALSE,
    quarantine_reason TEXT,
    superseded BOOLEAN NOT NULL DEFAULT FALSE,
    superseded_at TIMESTAMP,
    supersedes INT[] NOT NULL DEFAULT '{}',
    version BIGINT NOT NULL DEFAULT 1,
    content_hash TEXT NOT NULL DEFAULT '',
    deleted_at TIMESTAMP
);
CREATE INDEX long_term_memory_tags ON long_term_memory USING GIN (tags);
CREATE TABLE memory_outbox (
    id BIGSERIAL PRIMARY KEY,
    event_id TEXT UNIQUE NOT NULL,
    aggregate_id BIGINT NOT NULL,
    user_id TEXT,
    aggregate_version BIGINT NOT NULL,
    event_type TEXT NOT NULL,
    target TEXT NOT NULL,
    payload JSONB NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    attempts INT NOT NULL DEFAULT 0,
    available_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
    locked_by TEXT,
    locked_at TIMESTAMPTZ,
    processed_at TIMESTAMPTZ,
    last_error TEXT,
    repair_dedupe_key TEXT UNIQUE,
    created_at TIMESTAMPTZ NOT NULL DEFAULT NOW()
);
"""


def find_bin(name: str) -> str | None:
    """A PostgreSQL server binary: Debian keeps them under /usr/lib/postgresql/<major>/bin."""
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgServer:
    """One running server; `create_database()` gives each test its own database."""

    def __init__(self, folder: Path, port: int) -> None:
        self.folder = folder
        self.port = port
        self._count = 0

    def dsn(self, dbname: str = "postgres", password: str | None = None) -> str:
        auth = f"postgres:{password}" if password is not None else "postgres"
        return f"postgresql://{auth}@127.0.0.1:{self.port}/{dbname}"

    def create_database(self, *, go_schema: bool = True) -> str:
        """A fresh database (with the Go system's tables); returns its DSN."""
        import psycopg

        self._count += 1
        name = f"t{os.getpid()}_{self._count}"
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        if go_schema:
            with psycopg.connect(self.dsn(name), autocommit=True) as conn:
                conn.execute(GO_SCHEMA)
        return self.dsn(name)


def _as_postgres(cmd: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return cmd
    return ["runuser", "-u", "postgres", "--", *cmd]


@contextmanager
def running_server(*, remove_later: bool = False) -> Iterator[PgServer]:
    """Start a server in a temporary folder; stop it and remove the folder afterwards
    (`remove_later`: by a process of its own, so the session does not wait for thousands of
    files of its databases to go)."""
    initdb, pg_ctl = find_bin("initdb"), find_bin("pg_ctl")
    assert initdb is not None and pg_ctl is not None
    folder = Path(tempfile.mkdtemp(prefix="memtui-pg-"))
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(folder, user.pw_uid, user.pw_gid)
    data, port = folder / "data", _free_port()
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE, "check": True}
    try:
        subprocess.run(
            _as_postgres(
                [
                    initdb,
                    "-D",
                    str(data),
                    "-U",
                    "postgres",
                    "--auth=trust",
                    "-E",
                    "UTF8",
                    "--no-sync",
                ]
            ),
            **quiet,  # type: ignore[arg-type]
        )
        options = (
            f"-p {port} -c listen_addresses=127.0.0.1 -k {folder} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c TimeZone=UTC"
        )
        subprocess.run(
            _as_postgres(
                [pg_ctl, "-D", str(data), "-o", options, "-l", str(folder / "log"), "-w", "start"]
            ),
            **quiet,  # type: ignore[arg-type]
        )
        try:
            yield PgServer(folder, port)
        finally:
            subprocess.run(
                _as_postgres([pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"]),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
            )
    finally:
        if remove_later:
            subprocess.Popen(
                ["rm", "-rf", "--", str(folder)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        else:
            shutil.rmtree(folder, ignore_errors=True)


# -- pytest fixtures (test modules import them) ------------------------------------------------


_SHARED: list[PgServer] = []  # the session's server, once started


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """The session's server; the PostgreSQL tests are skipped only when no server is installed.
    Each module that imports this fixture has a session fixture of its own: the first starts
    the server (and stops it when the session ends), the others share it."""
    if find_bin("initdb") is None or find_bin("pg_ctl") is None:
        pytest.skip(
            "no PostgreSQL server binaries (initdb, pg_ctl): install Debian's `postgresql` "
            "package to run the PostgreSQL store tests (.ci/run does)"
        )
    if _SHARED:
        yield _SHARED[0]
        return
    with running_server(remove_later=True) as server:
        _SHARED.append(server)
        try:
            yield server
        finally:
            _SHARED.clear()


@pytest.fixture
def pg_dsn(pg_server: PgServer) -> str:
    """A fresh database holding the Go system's (empty) tables."""
    return pg_server.create_database()
