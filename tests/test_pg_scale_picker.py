"""The TUI on a big PostgreSQL table without `#user=` asks which user to open first: each user
with their rows, filtered by typing; Enter opens that user (as `#user=U` does); "all users"
opens every row; a small table opens as before. Snapshots at 80x24 and 160x45."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList

from memtui.demo import make_demo_memories
from memtui.service import Service
from memtui.service.pg_users import TableUsers, UserRows
from memtui.stores import create_native_store
from memtui.tui import make_app
from memtui.tui.app import MemtuiApp
from memtui.tui.screens.home import HomeScreen
from memtui.tui.screens.pick_user import UserPickScreen
from tests.conftest import NOW
from tests.pg_scale_rows import fill
from tests.pg_server import PgServer, pg_server  # noqa: F401

os.environ["TEXTUAL_ANIMATIONS"] = "none"


@pytest.fixture(scope="module")
def table(pg_server: PgServer) -> str:  # noqa: F811
    dsn = pg_server.create_database()
    fill(dsn, 1200, 6, NOW.replace(day=28), seed=3)
    return dsn


@pytest.fixture
def small_pick(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables of more than 1,000 rows count as big here (100,000 in use)."""
    monkeypatch.setattr("memtui.service.pg_users.PICK_FROM", 1000)


async def _settle(pilot: Pilot, app: MemtuiApp) -> None:
    for _ in range(300):  # until the picker is up or the store has loaded (a busy machine)
        await pilot.pause(0.02)
        if isinstance(app.screen, UserPickScreen) or app.store is not None:
            break
    await app.workers.wait_for_complete()
    await pilot.pause()


def _listed(app: MemtuiApp) -> list[str]:
    options = app.screen.query_one("#pick-users", OptionList)
    return [str(options.get_option_at_index(n).prompt) for n in range(options.option_count)]


def _counts(dsn: str) -> dict[str, int]:
    picked = Service().pg_users.to_pick(dsn)
    assert picked is not None
    return {u.user: u.rows for u in picked.users}


async def test_typing_filters_and_enter_opens_that_user(table: str, small_pick: None) -> None:
    counts = _counts(table)
    app = make_app(table, now=NOW, watch_interval=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await _settle(pilot, app)
        assert isinstance(app.screen, UserPickScreen)
        listed = _listed(app)
        assert listed[0].startswith("all users  1,200 rows")
        biggest = min(counts, key=lambda u: (-counts[u], u))  # then by name
        assert listed[1].split()[0] == biggest  # most rows first
        await pilot.press("u", "3")
        assert [line.split()[0] for line in _listed(app)[1:]] == ["u3"]
        await pilot.press("enter")
        await _settle(pilot, app)
        assert isinstance(app.screen, HomeScreen)
        assert app.store is not None and len(app.store) == counts["u3"]
        assert {m.user_id for m in app.store.memories()} == {"u3"}
        assert app.store_path.endswith("#user=u3") and "#user=u3" in app.sub_title


async def test_all_users_opens_every_row(table: str, small_pick: None) -> None:
    app = make_app(table, now=NOW, watch_interval=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await _settle(pilot, app)
        assert isinstance(app.screen, UserPickScreen)
        await pilot.press("up", "enter")  # the first row: all users
        await _settle(pilot, app)
        assert app.store is not None and len(app.store) == 1200
        assert "#user" not in app.store_path


async def test_no_user_matches_what_is_typed(table: str, small_pick: None) -> None:
    app = make_app(table, now=NOW, watch_interval=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await _settle(pilot, app)
        await pilot.press("z", "z")
        assert _listed(app)[1] == "no user matches 'zz'"
        await pilot.press("enter")  # the highlight is on "all users" then
        await _settle(pilot, app)
        assert app.store is not None and len(app.store) == 1200


async def test_a_small_table_opens_without_asking(table: str) -> None:
    app = make_app(table, now=NOW, watch_interval=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await _settle(pilot, app)
        assert isinstance(app.screen, HomeScreen)
        assert app.store is not None and len(app.store) == 1200


async def test_a_named_user_opens_without_asking(table: str, small_pick: None) -> None:
    app = make_app(table + "#user=u1", now=NOW, watch_interval=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await _settle(pilot, app)
        assert isinstance(app.screen, HomeScreen)
        assert app.store is not None and {m.user_id for m in app.store.memories()} == {"u1"}


async def test_a_table_memtui_cannot_read_says_so(table: str, small_pick: None) -> None:
    app = make_app(table + "#table=nope", now=NOW, watch_interval=0)
    async with app.run_test(size=(120, 30)) as pilot:
        for _ in range(300):
            await pilot.pause(0.02)
            if app.load_problem is not None:
                break
        assert isinstance(app.screen, HomeScreen) and app.exit_code == 1
        assert app.load_problem is not None and "has no table nope" in app.load_problem


# -- snapshots ---------------------------------------------------------------------------------

SIZES = {"80x24": (80, 24), "160x45": (160, 45)}
USERS = TableUsers(
    1_204_311,
    [UserRows(f"agent-{n:04d}", 90_000 // (n + 1) + 7) for n in range(40)]
    + [UserRows("legacy", 12)],
)


@pytest.mark.parametrize("size", SIZES)
def test_picker_snapshot(
    size: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, snap_compare
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    memories = make_demo_memories(20, 5, NOW)
    create_native_store(Path("demo.json"), memories, now=NOW, kind="demo", reason="snapshot")

    async def run_before(pilot: Pilot) -> None:
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        where = "postgresql://postgres@127.0.0.1:5432/agents"
        pilot.app.push_screen(UserPickScreen(where, USERS))
        await pilot.pause()
        await pilot.press("a", "g", "e", "n", "t", "-", "0", "0", "1", "down")
        pilot.app.screen.query_one("#pick-filter").cursor_blink = False  # type: ignore[attr-defined]
        pilot.app.clear_notifications()
        await pilot.pause(0.2)

    assert snap_compare(
        make_app("demo.json", now=NOW, watch_interval=0),
        terminal_size=SIZES[size],
        run_before=run_before,
    )


async def test_escape_clears_what_was_typed_then_leaves(table: str, small_pick: None) -> None:
    app = make_app(table, now=NOW, watch_interval=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await _settle(pilot, app)
        assert isinstance(app.screen, UserPickScreen)
        await pilot.press("u", "3")
        assert len(_listed(app)) == 2
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, UserPickScreen) and app.is_running
        assert len(_listed(app)) == 1 + len(_counts(table))  # the filter is gone
        await pilot.press("escape")
        await pilot.pause()
        assert not app.is_running and app.store is None


def test_the_legacy_user_opens_the_rows_the_picker_counts(
    pg_server: PgServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rows of no user and of an empty user id are both 'legacy', in the picker and open."""
    monkeypatch.setattr("memtui.service.pg_users.PICK_FROM", 3)
    import psycopg

    dsn = pg_server.create_database()
    with psycopg.connect(dsn) as conn:
        for user in (None, None, "", "", "legacy", "u1"):
            conn.execute(
                "INSERT INTO long_term_memory (user_id, content) VALUES (%s, %s)",
                [user, f"a note of {user!r}"],
            )
    svc = Service()
    picked = svc.pg_users.to_pick(dsn)
    assert picked is not None
    assert {u.user: u.rows for u in picked.users} == {"legacy": 5, "u1": 1}
    opened = svc.stores.open(svc.pg_users.for_user(dsn, "legacy"))
    assert len(opened) == 5 and {m.user_id for m in opened.memories()} == {"legacy"}
