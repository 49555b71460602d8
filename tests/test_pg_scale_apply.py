"""A plan made user by user (`memtui plan URL --out F`) applies as a plan of the whole table
does: no action touches two users' rows, rows no action targets stay as they were, an agent's
write between plan and apply refuses the apply with nothing written, and apply then undo leave
every row with the columns it had (a real server)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from memtui.service import Service
from memtui.stores.postgres.pg_store import PgStore
from tests.conftest import NOW, CliResult
from tests.pg_agent import restored_part, rows, update
from tests.pg_scale_rows import fill
from tests.pg_server import PgServer, pg_dsn, pg_server  # noqa: F401

USER_OF = "coalesce(nullif(user_id, ''), 'legacy')"


def _planned(dsn: str, tmp: Path, cli: Callable[..., CliResult]) -> tuple[Path, dict[str, Any]]:
    fill(dsn, 1500, 7, NOW - timedelta(days=2), seed=11)
    out = tmp / "plan.json"
    made = cli("plan", dsn, "--out", str(out))
    assert made.code == 0, made.err
    return out, json.loads(out.read_bytes())


def _users(dsn: str) -> dict[str, str]:
    with psycopg.connect(dsn) as conn:
        return {str(i): u for i, u in conn.execute(f"SELECT id, {USER_OF} FROM long_term_memory")}


def test_no_action_touches_two_users_rows(
    pg_dsn: str,  # noqa: F811
    tmp_path: Path,
    cli: Callable[..., CliResult],
) -> None:
    out, _ = _planned(pg_dsn, tmp_path, cli)
    plan = Service().plans.load_plan(str(out), PgStore.open(pg_dsn))
    user = _users(pg_dsn)
    assert len(plan.actions) > 100
    for action in plan.actions:
        rows_of = {user[m.id] for m in action.before if m.id in user}
        assert len(rows_of) == 1, action.id
        assert {m.user_id for m in (*action.before, *action.after)} == rows_of, action.id


def test_apply_then_undo_leaves_every_row_as_it_was(
    pg_dsn: str,  # noqa: F811
    tmp_path: Path,
    cli: Callable[..., CliResult],
) -> None:
    out, _ = _planned(pg_dsn, tmp_path, cli)
    before = rows(pg_dsn)
    plan = Service().plans.load_plan(str(out), PgStore.open(pg_dsn))
    targeted = {
        int(t) for a in plan.actions if not a.needs_decision for t in a.targets if t.isdigit()
    }
    applied = cli("apply", pg_dsn, str(out), "--yes")
    assert applied.code == 0, applied.err
    after = rows(pg_dsn)
    changed = {i for i in before if after[i] != before[i]}
    assert changed and changed <= targeted
    assert {i: after[i] for i in before if i not in targeted} == {
        i: before[i] for i in before if i not in targeted
    }
    undone = cli("undo", pg_dsn)
    assert undone.code == 0, undone.err
    back = rows(pg_dsn)
    made = set(back) - set(before)  # a merge's new row: a tombstone once undone
    assert made and all(back[i]["deleted_at"] is not None for i in made)
    assert restored_part({i: back[i] for i in before}) == restored_part(before)


def test_an_agent_write_between_plan_and_apply_is_refused(
    pg_dsn: str,  # noqa: F811
    tmp_path: Path,
    cli: Callable[..., CliResult],
) -> None:
    out, made = _planned(pg_dsn, tmp_path, cli)
    plan = Service().plans.load_plan(str(out), PgStore.open(pg_dsn))
    first = next(a for a in plan.actions if not a.needs_decision and a.targets[0].isdigit())
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        update(conn, int(first.targets[0]), content="the agent rewrote this meanwhile")
    before = rows(pg_dsn)
    applied = cli("apply", pg_dsn, str(out), "--yes")
    assert applied.code != 0
    assert "changed since" in applied.err and "nothing was written" in applied.err
    assert "Traceback" not in applied.err
    assert rows(pg_dsn) == before
    assert made["store_fingerprint"] != PgStore.open(pg_dsn).fingerprint


@pytest.mark.parametrize("profile", ["longterm", "default"])
def test_the_plan_names_the_tables_stamp(
    pg_dsn: str,  # noqa: F811
    tmp_path: Path,
    cli: Callable[..., CliResult],
    profile: str,
) -> None:
    fill(pg_dsn, 600, 4, NOW - timedelta(days=2), seed=4)
    out = tmp_path / "plan.json"
    assert cli("plan", pg_dsn, "--profile", profile, "--out", str(out)).code == 0
    assert json.loads(out.read_bytes())["store_fingerprint"] == PgStore.open(pg_dsn).fingerprint
