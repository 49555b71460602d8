"""`memtui apply URL PLAN` reads only the rows the plan names (#24 item 5): a plan file checked
against a `PgTable` (rows by id, each user's active rows counted by the server) comes out as
the one checked against the whole loaded table (`PgStore`) — the same actions, the same
wholesale holds and warnings — and it refuses what the whole path refuses, with nothing
written: a plan for another table, an agent's write since, an action outside its kind's rules,
edited wording (a real server)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from memtui.engine.wholesale import held
from memtui.service import Service
from memtui.stores.postgres.location import PgLocation
from memtui.stores.postgres.pg_store import PgStore
from memtui.stores.postgres.table import PgTable
from tests.conftest import NOW, CliResult
from tests.pg_agent import rows, update
from tests.pg_scale_rows import fill
from tests.pg_server import PgServer, pg_dsn, pg_server  # noqa: F401

Cli = Callable[..., CliResult]


def _plan_file(dsn: str, tmp: Path, cli: Cli, *args: str) -> Path:
    out = tmp / "plan.json"
    made = cli("plan", dsn, "--out", str(out), *args)
    assert made.code == 0, made.err
    return out


@pytest.mark.parametrize(
    ("rows_", "users", "seed", "days", "profile", "version"),
    [
        (1500, 7, 11, 400, "longterm", "2"),
        (1200, 5, 3, 3, "longterm", "2"),
        (900, 4, 8, 400, "default", "2"),
        (900, 4, 5, 60, "longterm", "1"),
    ],
)
def test_the_rows_a_plan_names_check_it_as_the_whole_table_does(
    pg_dsn: str,  # noqa: F811
    tmp_path: Path,
    cli: Cli,
    rows_: int,
    users: int,
    seed: int,
    days: int,
    profile: str,
    version: str,
) -> None:
    fill(pg_dsn, rows_, users, NOW - timedelta(days=2), seed=seed, days=days)
    out = _plan_file(pg_dsn, tmp_path, cli, "--profile", profile, "--plan-version", version)
    svc = Service()
    whole = svc.plans.load_plan(str(out), PgStore.open(pg_dsn))
    table = PgTable.open(pg_dsn)
    partial = svc.plans.load_plan(str(out), table)
    assert len(partial.actions) > 50
    assert partial.to_dict() == whole.to_dict()
    assert [(a.id, a.needs_decision, a.reason) for a in partial.actions] == [
        (a.id, a.needs_decision, a.reason) for a in whole.actions
    ]
    assert partial.warnings == whole.warnings
    named = {t for a in partial.actions for t in a.targets}
    assert set(table._memories) <= named  # read: the rows the plan names, no others
    assert len(table._memories) < rows_


def test_the_guard_holds_on_the_partial_path_what_it_holds_on_the_whole(
    pg_dsn: str,  # noqa: F811
    tmp_path: Path,
    cli: Cli,
) -> None:
    fill(pg_dsn, 1500, 7, NOW - timedelta(days=2), seed=11, days=400)
    out = _plan_file(pg_dsn, tmp_path, cli)
    data = json.loads(out.read_bytes())
    svc = Service()
    whole = svc.plans.load_plan(str(out), PgStore.open(pg_dsn))
    partial = svc.plans.load_plan(str(out), PgTable.open(pg_dsn))
    held_whole = [a.id for a in whole.actions if held(a)]
    assert held_whole, "the generated table crosses the guard's line"
    assert [a.id for a in partial.actions if held(a)] == held_whole
    lines = [w for w in partial.warnings if "review before approving" in w]
    assert lines and lines == [w for w in whole.warnings if "review before approving" in w]
    assert lines == [w for w in data["warnings"] if "review before approving" in w]


def _refused(result: CliResult, dsn: str, before: dict[int, dict[str, Any]]) -> str:
    assert result.code != 0, result.out
    assert "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1, result.err
    assert rows(dsn) == before
    return result.err


def test_a_plan_for_another_table_is_refused(
    pg_server: PgServer,  # noqa: F811
    pg_dsn: str,  # noqa: F811
    tmp_path: Path,
    cli: Cli,
) -> None:
    fill(pg_dsn, 600, 4, NOW - timedelta(days=2), seed=2)
    other = pg_server.create_database()
    fill(other, 600, 4, NOW - timedelta(days=2), seed=2)
    out = _plan_file(pg_dsn, tmp_path, cli)
    before = rows(other)
    err = _refused(cli("apply", other, str(out), "--yes"), other, before)
    made, applied = PgLocation.parse(pg_dsn).display, PgLocation.parse(other).display
    assert err.strip() == f"memtui: the plan was made for {made}, not {applied}"


def test_an_agent_write_since_the_plan_is_refused(
    pg_dsn: str,  # noqa: F811
    tmp_path: Path,
    cli: Cli,
) -> None:
    fill(pg_dsn, 900, 5, NOW - timedelta(days=2), seed=6)
    out = _plan_file(pg_dsn, tmp_path, cli)
    plan = Service().plans.load_plan(str(out), PgTable.open(pg_dsn))
    touched = [a for a in plan.actions if not a.needs_decision and a.targets[0].isdigit()]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        update(conn, int(touched[-1].targets[0]), importance=0.99)
        update(conn, int(touched[0].targets[0]), content="the agent rewrote this meanwhile")
    before = rows(pg_dsn)
    err = _refused(cli("apply", pg_dsn, str(out), "--yes"), pg_dsn, before)
    assert "changed since the plan was made; 2 of the entries it touches differ" in err
    assert touched[0].targets[0] in err and "nothing was written" in err


def test_an_action_outside_its_kinds_rules_is_refused(
    pg_dsn: str,  # noqa: F811
    tmp_path: Path,
    cli: Cli,
) -> None:
    fill(pg_dsn, 900, 5, NOW - timedelta(days=2), seed=6, days=400)
    out = _plan_file(pg_dsn, tmp_path, cli, "--plan-version", "1")
    data = json.loads(out.read_bytes())
    action = next(
        a
        for a in data["actions"]
        if a["kind"] in ("decay", "expire", "archive")
        and len(a["before"]) == 1
        and len(a["after"]) == 1
    )
    action["after"][0]["category"] = "edited-in-the-file"
    out.write_text(json.dumps(data))
    before = rows(pg_dsn)
    err = _refused(cli("apply", pg_dsn, str(out), "--yes"), pg_dsn, before)
    assert f"plan action {action['id']} ({action['kind']}) changes category of" in err
    assert f"which a {action['kind']} never does" in err


def test_edited_wording_is_refused_by_its_seal(
    pg_dsn: str,  # noqa: F811
    tmp_path: Path,
    cli: Cli,
) -> None:
    fill(pg_dsn, 1500, 7, NOW - timedelta(days=2), seed=11)
    out = _plan_file(pg_dsn, tmp_path, cli)
    data = json.loads(out.read_bytes())
    merge = next(
        a
        for a in data["actions"]
        if isinstance(a, dict) and a.get("kind") == "merge" and a["id"] in data["seals"]["actions"]
    )
    new = next(r for r in merge["after"] if isinstance(r, dict))
    new["content"] = "my bank PIN is 1234"
    out.write_text(json.dumps(data))
    before = rows(pg_dsn)
    err = _refused(cli("apply", pg_dsn, str(out), "--yes"), pg_dsn, before)
    assert err.strip() == (
        f"memtui: plan action {merge['id']} (merge): its wording was changed after memtui "
        "wrote the plan (its seal does not match) — make a new plan"
    )
