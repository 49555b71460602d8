"""Every wait on the server has a limit (`[postgres]` in the config) and a clear line when it is
reached: a host that accepts the connection and never answers, a row the agent holds locked,
a statement that runs too long."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from tests.conftest import CliResult
from tests.pg_agent import insert, rows
from tests.pg_server import PgServer, pg_dsn, pg_server  # noqa: F401


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A loopback port that accepts connections and never says a word."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield int(listener.getsockname()[1])
    listener.close()
    for conn in held:
        conn.close()


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text("[postgres]\n" + text)
    return path


def test_a_server_that_never_answers_is_given_up_on(
    silent_port: int, tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    config = _config(tmp_path, "connect_timeout = 2\n")
    result = cli(
        "--config", config, "list", f"postgresql://agent:pw@127.0.0.1:{silent_port}/memory"
    )
    assert result.code == 1
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
    assert "cannot connect: the server did not answer within 2 s ([postgres] connect_timeout)" in (
        result.err
    )
    assert "pw" not in result.err


@pytest.mark.parametrize(
    ("limits", "said"),
    [
        (
            "lock_timeout = 0.5\n",
            "is locked by another session (the agent?); memtui waited 0.5 s "
            "([postgres] lock_timeout); nothing was written",
        ),
        (
            "lock_timeout = 0\nstatement_timeout = 0.5\n",
            "a statement ran longer than 0.5 s ([postgres] statement_timeout)",
        ),
    ],
)
def test_an_edit_of_a_row_the_agent_holds_stops_at_the_limit(
    pg_dsn: str,  # noqa: F811
    tmp_path: Path,
    cli: Callable[..., CliResult],
    limits: str,
    said: str,
) -> None:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        held = insert(conn, "held by the agent")
        free = insert(conn, "not held")
    config = _config(tmp_path, limits)
    before = rows(pg_dsn)
    with psycopg.connect(pg_dsn) as agent:  # a transaction left open over the row
        agent.execute("SELECT * FROM long_term_memory WHERE id = %s FOR UPDATE", [held])
        result = cli("--config", config, "edit", pg_dsn, str(held), "--content", "x")
        assert result.code == 1
        assert result.err.count("\n") == 1 and "Traceback" not in result.err
        assert said in result.err
        if "lock_timeout" in said:
            assert f"entry {held} is locked" in result.err
        assert rows(pg_dsn) == before
        # the other rows are not held: an edit of one goes through meanwhile
        other = cli("--config", config, "edit", pg_dsn, str(free), "--content", "y")
        assert other.code == 0, other.err
    assert rows(pg_dsn)[held] == before[held]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("lock_timeout = -1\n", "[postgres] lock_timeout: must be at least 0, got -1"),
        ('statement_timeout = "5s"\n', "[postgres] statement_timeout: expected a number"),
        ("connect_timeout = nan\n", "[postgres] connect_timeout: expected a number of seconds"),
        ("wait = 3\n", "[postgres] wait: no such setting"),
    ],
)
def test_a_bad_limit_in_the_config_is_one_line(
    tmp_path: Path, cli: Callable[..., CliResult], text: str, said: str
) -> None:
    result = cli("--config", _config(tmp_path, text), "list", "postgresql://a@127.0.0.1:1/db")
    assert result.code == 1 and said in result.err and result.err.count("\n") == 1
