"""A PostgreSQL table planned user by user (`PgTable`, service/pg_plan.py) gives the plan the
whole loaded table gives, byte for byte: the plan file and `--json`, on generated tables with
interleaved users, legacy rows, superseded chains within and across users (a real server)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtui.errors import MemtuiError
from memtui.service import Service
from memtui.stores.postgres.pg_store import PgStore
from memtui.stores.postgres.table import PgTable, user_counts
from tests.conftest import NOW as CLOCK
from tests.conftest import CliResult
from tests.pg_scale_rows import fill
from tests.pg_server import PgServer, pg_dsn, pg_server  # noqa: F401

NOW = CLOCK
MADE = NOW - timedelta(days=2)


def _both(svc: Service, dsn: str, profile_name: str, tmp: Path) -> tuple[bytes, bytes, str, str]:
    """The plan file and its JSON: from the whole loaded table, and user by user."""
    full = PgStore.open(dsn)
    profile = svc.profiles.profile(full, profile_name)
    whole = svc.plans.plan(full, profile, now=NOW)
    svc.plans.write_plan(whole, str(tmp / "whole.json"))
    whole_json = b"".join(svc.plans.plan_json_parts(whole, 1))
    table = PgTable.open(dsn)
    streamed = svc.plans.plan_stream(table, profile, now=NOW)
    parts: list[bytes] = []
    svc.plans.write_stream(streamed, str(tmp / "by-user.json"), json_out=parts.append)
    by_user = (tmp / "by-user.json").read_bytes()
    assert parts and whole.actions, "the generated table should give a plan with actions"
    assert b"".join(parts) == whole_json
    return (tmp / "whole.json").read_bytes(), by_user, whole.store_fingerprint, full.fingerprint


@pytest.mark.parametrize("profile", ["longterm", "default", "thesearch"])
def test_user_by_user_plan_is_the_whole_plan_byte_for_byte(
    pg_dsn: str,  # noqa: F811
    tmp_path: Path,
    profile: str,
) -> None:
    fill(pg_dsn, 1500, 12, MADE, seed=5, used=profile != "default")
    whole, by_user, fingerprint, now_is = _both(Service(), pg_dsn, profile, tmp_path)
    assert by_user == whole
    assert json.loads(by_user)["store_fingerprint"] == fingerprint == now_is


def test_the_generated_table_has_what_the_test_is_for(pg_dsn: str) -> None:  # noqa: F811
    fill(pg_dsn, 3000, 12, MADE, seed=5)
    users = {u.user: u for u in user_counts(PgStore.open(pg_dsn))}
    assert "legacy" in users and len(users) == 13  # u0..u11 and the rows of no user
    assert sum(u.rows for u in users.values()) == 3000
    with psycopg.connect(pg_dsn) as conn:
        across = conn.execute(
            "SELECT count(*) FROM long_term_memory s, unnest(s.supersedes) o, long_term_memory x "
            "WHERE x.id = o AND coalesce(nullif(x.user_id, ''), 'legacy') "
            "<> coalesce(nullif(s.user_id, ''), 'legacy')"
        ).fetchone()
        within = conn.execute(
            "SELECT count(*) FROM long_term_memory s, unnest(s.supersedes) o, long_term_memory x "
            "WHERE x.id = o AND x.user_id = s.user_id"
        ).fetchone()
    assert across and across[0] > 0 and within and within[0] > 0


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    rows=st.integers(200, 900),
    users=st.integers(2, 30),
    seed=st.integers(0, 10_000),
    used=st.booleans(),
)
def test_generated_tables_plan_alike(
    pg_server: PgServer,  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
    rows: int,
    users: int,
    seed: int,
    used: bool,
) -> None:
    dsn = pg_server.create_database()
    fill(dsn, rows, users, MADE, seed=seed, used=used)
    whole, by_user, _, _ = _both(Service(), dsn, "longterm", tmp_path_factory.mktemp("plans"))
    assert by_user == whole


def test_a_table_of_one_user_plans_whole_alike(pg_dsn: str, tmp_path: Path) -> None:  # noqa: F811
    fill(pg_dsn, 400, 1, MADE, seed=2)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("UPDATE long_term_memory SET user_id = 'u0'")
    whole, by_user, _, _ = _both(Service(), pg_dsn, "longterm", tmp_path)
    assert by_user == whole


def test_a_table_read_by_user_gives_no_rows(pg_dsn: str) -> None:  # noqa: F811
    fill(pg_dsn, 100, 3, MADE)
    table = PgTable.open(pg_dsn)
    assert len(table) == 100
    with pytest.raises(MemtuiError, match="opened user by user"):
        table.memories()


def test_cli_plan_of_a_table_is_made_user_by_user(
    pg_dsn: str,  # noqa: F811
    tmp_path: Path,
    cli: Callable[..., CliResult],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fill(pg_dsn, 2000, 8, MADE, seed=9)
    opened: list[str] = []
    out = tmp_path / "plan.json"
    with monkeypatch.context() as patched:
        patched.setattr(PgStore, "memories", lambda self: opened.append("all") or [])
        result = cli("plan", pg_dsn, "--out", str(out), "--now", NOW.isoformat())
    assert result.code == 0, result.err
    assert opened == []  # the rows were never all loaded
    svc = Service()
    full = PgStore.open(pg_dsn)
    whole = svc.plans.plan(full, svc.profiles.profile(full, None), now=NOW)
    svc.plans.write_plan(whole, str(tmp_path / "whole.json"))
    assert out.read_bytes() == (tmp_path / "whole.json").read_bytes()


def test_after_an_apply_the_plans_still_agree(
    pg_dsn: str,  # noqa: F811
    tmp_path: Path,
    cli: Callable[..., CliResult],
) -> None:
    """memtui's side statuses, merged rows and tombstones in the table: the same plan again."""
    fill(pg_dsn, 1200, 6, MADE, seed=8)
    first = tmp_path / "first.json"
    assert cli("plan", pg_dsn, "--profile", "default", "--out", str(first)).code == 0
    assert cli("apply", pg_dsn, str(first), "--yes").code == 0
    with psycopg.connect(pg_dsn) as conn:
        sides = conn.execute("SELECT count(*) FROM memtui_entry").fetchone()
    assert sides and sides[0] > 0
    whole, by_user, _, _ = _both(Service(), pg_dsn, "default", tmp_path)
    assert by_user == whole
