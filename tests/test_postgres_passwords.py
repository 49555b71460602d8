"""A password in a database URL never reaches what memtui shows or saves on a working server,
whatever it holds: `stats`, the plan's "store", the undo hint, history, a failed connection
(the URLs libpq would misread are refused: tests/test_faults_pg_names.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from tests.conftest import CliResult
from tests.pg_agent import insert
from tests.pg_server import PgServer, pg_server  # noqa: F401

# (the URL's tail after the user, what must never be shown: the password as written, decoded,
# and a piece of it)
READ = {
    "unencoded ?": (":pa?ss6Zq@", ["pa?ss6Zq", "ss6Zq"]),
    "encoded @ / #": (":p%40ss%2Fw%23rd9K@", ["p@ss/w#rd9K", "p%40ss%2Fw%23rd9K", "rd9K"]),
    "unencoded #": (":pa#ss7Yx@", ["pa#ss7Yx", "ss7Yx"]),
    "percent-encoded letters": (":%41%42c8Vu@", ["ABc8Vu", "%41%42c8Vu", "c8Vu"]),
}


def _seed(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        insert(conn, "用户喜欢咖啡", importance=0.8)
        insert(conn, "用户喜欢咖啡", importance=0.6)


@pytest.mark.parametrize("case", sorted(READ))
@pytest.mark.parametrize("where", ["in the user info", "and memtui's options"])
def test_a_password_is_cut_out_of_every_name_shown_or_saved(
    pg_server: PgServer,  # noqa: F811
    cli: Callable[..., CliResult],
    tmp_path: Path,
    case: str,
    where: str,
) -> None:
    written, secrets = READ[case]
    plain = pg_server.create_database()
    _seed(plain)
    dsn = plain.replace("postgres@", f"postgres{written}")  # the test server trusts any password
    if where == "and memtui's options":
        dsn += "?application_name=x&password=Qp4xZw#user=u1"
        secrets = [*secrets, "Qp4xZw"]
    plan = tmp_path / "plan.json"
    shown = [
        cli("stats", dsn),
        cli("plan", dsn, "--out", plan),
        cli("edit", dsn, "1", "--importance", "0.7"),
        cli("history", dsn, "--json"),
        cli("undo", dsn),
        cli("list", dsn.replace(f":{pg_server.port}/", ":1/")),  # no server there
    ]
    assert [r.code for r in shown] == [0, 0, 0, 0, 0, 1], [r.err for r in shown]
    assert "cannot connect" in shown[-1].err and shown[-1].err.count("\n") == 1
    assert "postgresql://postgres@127.0.0.1" in shown[0].out
    assert f"undo with: memtui undo postgresql://postgres@127.0.0.1:{pg_server.port}/" in (
        shown[2].out
    )
    saved = plan.read_text()
    assert '"store":"postgresql://postgres@127.0.0.1' in saved
    for result in shown:
        for secret in secrets:
            assert secret not in result.out + result.err, (secret, result)
    for secret in secrets:
        assert secret not in saved
