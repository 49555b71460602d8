"""A PostgreSQL password never shows, whatever it holds: the URL is read with libpq's own rules
(`psycopg.conninfo`); one libpq reads differently from what was meant is refused in one line
that quotes none of it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

pytest.importorskip("psycopg")

from psycopg.conninfo import conninfo_to_dict

from memtui.stores.postgres.location import PgLocation
from tests.conftest import CliResult

Cli = Callable[..., CliResult]
# port 1 on the loopback: nothing listens, so a connection fails at once
READ_AS_MEANT = {
    "postgresql://qm:pa?ss6Zq@127.0.0.1:1/leak": "pa?ss6Zq",
    "postgresql://qm:pa#ss7Zq@127.0.0.1:1/leak": "pa#ss7Zq",
    "postgresql://qm:pa%40ss8Zq@127.0.0.1:1/leak#table=t": "pa@ss8Zq",
    "postgresql://qm@127.0.0.1:1/leak?password=pa%26ss5Zq&sslmode=disable": "pa&ss5Zq",
}
MISREAD = [
    "postgresql://qm:pa@ss9Zq@127.0.0.1:1/leak",
    "postgresql://qm:pa/ss4Zq@127.0.0.1:1/leak",
]


@pytest.mark.parametrize("url", READ_AS_MEANT)
def test_a_password_libpq_reads_is_in_no_name_memtui_shows(url: str) -> None:
    location = PgLocation.parse(url)
    assert location.password == READ_AS_MEANT[url]
    shown = str(location.display)
    assert "ss" not in shown.replace("sslmode", "") and "Zq" not in shown
    params = conninfo_to_dict(shown.partition("#")[0])
    assert "password" not in params
    assert (params["user"], params["host"], params["port"], params["dbname"]) == (
        "qm",
        "127.0.0.1",
        "1",
        "leak",
    )


@pytest.mark.parametrize("url", [*READ_AS_MEANT, *MISREAD])
def test_no_message_quotes_the_password(url: str, cli: Cli) -> None:
    for command in ("stats", "list", "history"):
        result = cli(command, url)
        lines = result.err.strip().splitlines()
        assert result.code == 1 and len(lines) == 1, result.err
        assert "Zq" not in result.err and "Zq" not in result.out, result.err
        assert "Traceback" not in result.err


@pytest.mark.parametrize("url", MISREAD)
def test_a_url_libpq_would_misread_is_refused_saying_what_to_do(url: str, cli: Cli) -> None:
    result = cli("stats", url)
    assert result.code == 1
    assert "must be percent-encoded ('@' %40, '/' %2F" in result.err
    assert "PGPASSWORD or ~/.pgpass" in result.err
