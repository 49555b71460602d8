"""A clock set back: backups are ordered and pruned by transaction, not by their time; a plan
as of a time before the store's own times, or made for a later time than the clock applies it
at, is refused in one line (pi, longterm, native)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtui.engine.planner import make_plan
from memtui.engine.profiles import PROFILES
from memtui.service import Service
from memtui.stores import open_store
from tests.conftest import CliResult

Cli = Callable[..., CliResult]


def _edit_at(cli: Cli, monkeypatch: pytest.MonkeyPatch, store: Path, when: str, text: str) -> None:
    monkeypatch.setenv("MEMTUI_NOW", when)
    ident = open_store(str(store)).memories()[0].id
    result = cli("edit", store, ident, "--content", text)
    assert result.code == 0, result.err


@pytest.mark.parametrize("name", ["example-store.json", "realistic-store.json"])
def test_a_clock_set_back_keeps_the_newest_backup_and_rollback_1_goes_before_it(
    fixture_copy: Callable[[str], Path],
    cli: Cli,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    name: str,
) -> None:
    store = fixture_copy(name)
    config = tmp_path / "config.toml"
    config.write_text("[store]\nbackups = 2\n")
    monkeypatch.setenv("MEMTUI_CONFIG", str(config))
    _edit_at(cli, monkeypatch, store, "2026-11-30T10:00:00Z", "first edit")
    _edit_at(cli, monkeypatch, store, "2026-11-30T11:00:00Z", "second edit")
    before_third = store.read_bytes()
    _edit_at(cli, monkeypatch, store, "2026-11-29T09:00:00Z", "third edit, clock set back")

    listed = cli("backups", store)
    assert listed.code == 0, listed.err
    lines = listed.out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("  1 ") and lines[0].endswith("before transaction 3")
    assert lines[1].startswith("  2 ") and lines[1].endswith("before transaction 2")

    assert open_store(str(store)).backups()[0].path.read_bytes() == before_third
    done = cli("rollback", store, "1")
    assert done.code == 0, done.err
    assert open_store(str(store)).memories()[0].content == "second edit"


def _store(fmt: str, fixture_copy: Callable[[str], Path], cli: Cli, tmp_path: Path) -> Path:
    if fmt == "pi":
        return fixture_copy("realistic-store.json")
    if fmt == "longterm":
        return fixture_copy("items.jsonl")
    native = tmp_path / "native.json"
    assert cli("import", fixture_copy("realistic-store.json"), native).code == 0
    return native


FORMATS = ["pi", "longterm", "native"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_plan_as_of_a_time_before_the_entries_is_refused(
    fmt: str, fixture_copy: Callable[[str], Path], cli: Cli, tmp_path: Path
) -> None:
    store = _store(fmt, fixture_copy, cli, tmp_path)
    before = store.read_bytes()
    out = tmp_path / "plan.json"
    result = cli("plan", store, "--now", "2020-01-01T00:00:00Z", "--out", out)
    assert result.code == 1 and len(result.err.strip().splitlines()) == 1, result.err
    assert "--now (2020-01-01T00:00:00Z) is before the store's own times" in result.err
    assert not out.exists() and store.read_bytes() == before


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_clock_set_back_years_refuses_to_plan(
    fmt: str,
    fixture_copy: Callable[[str], Path],
    cli: Cli,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = _store(fmt, fixture_copy, cli, tmp_path)
    monkeypatch.setenv("MEMTUI_NOW", "2019-06-01T00:00:00Z")
    result = cli("plan", store)
    assert result.code == 1 and "the clock (2019-06-01T00:00:00Z) is before" in result.err


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_plan_made_for_a_later_time_than_the_clock_is_refused(
    fmt: str,
    fixture_copy: Callable[[str], Path],
    cli: Cli,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = _store(fmt, fixture_copy, cli, tmp_path)
    out = tmp_path / "plan.json"
    made = cli("plan", store, "--now", "2027-06-01T00:00:00Z", "--out", out)
    assert made.code == 0, made.err
    before = store.read_bytes()
    result = cli("apply", store, out, "--yes")
    assert result.code == 1 and len(result.err.strip().splitlines()) == 1, result.err
    assert "the plan was made as of 2027-06-01T00:00:00Z, later than the clock" in result.err
    assert store.read_bytes() == before
    monkeypatch.setenv("MEMTUI_NOW", "2027-06-01T00:00:00Z")
    assert cli("apply", store, out, "--yes").code == 0


def test_a_plan_file_made_with_a_clock_behind_is_refused_on_apply(
    fixture_copy: Callable[[str], Path], cli: Cli, tmp_path: Path
) -> None:
    """A plan an older memtui made with a clock years behind never writes its anchors."""
    store_path = fixture_copy("realistic-store.json")
    svc = Service()
    store = svc.stores.open(store_path)
    behind = datetime(2020, 1, 1, tzinfo=UTC)
    plan = make_plan(
        store.memories(),
        PROFILES["pi"],
        behind,
        store=str(store.path),
        store_format="pi",
        ids=store.traits.ids,
        fingerprint=store.fingerprint,
    )
    assert any(a.kind == "decay" for a in plan.actions)
    out = tmp_path / "plan.json"
    svc.plans.write_plan(plan, str(out))
    before = store_path.read_bytes()
    result = cli("apply", store_path, out, "--yes")
    assert result.code == 1 and len(result.err.strip().splitlines()) == 1, result.err
    assert "the plan's time (2020-01-01T00:00:00Z) is before the store's own times" in result.err
    assert store_path.read_bytes() == before
