"""A plan file applied a user at a time (issue 24 item 4: `memtui apply` reads a whole store's
plan one user's run of actions after another, checking each as the whole file is checked) is
the transaction the whole file makes, byte for byte; a file that does not read so (a user's
actions in two runs) is read whole, and a problem is named as the whole reading names it."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from memtui.demo.generate import make_demo_memories
from memtui.errors import ConflictError
from memtui.planfile.by_user import NotByUser, read_by_user
from memtui.service import Service
from memtui.service.plans import apply_plan
from memtui.stores import create_native_store, open_store
from memtui.stores.formats.pi import PiFormat
from tests.conftest import NOW, CliResult

Cli = Callable[..., CliResult]
PLANNED = NOW
APPLIED = NOW + timedelta(minutes=5)
USERS = 5


def _store(tmp_path: Path, fmt: str = "native") -> tuple[Path, Path]:
    """A generated store of USERS users taking turns, and its copy to apply to."""
    memories = make_demo_memories(1500, 7, NOW)
    memories = [m.with_(user_id=f"user-{i % USERS}") for i, m in enumerate(memories)]
    source = tmp_path / "source.json"
    create_native_store(source, memories, now=NOW, kind="import", reason="test")
    if fmt == "pi":
        exported = tmp_path / "exported.json"
        Service().stores.export(open_store(str(source)), exported, PiFormat.name)
        source = exported
    store = tmp_path / "store" / "memory-store.json"
    store.parent.mkdir()
    shutil.copyfile(source, store)
    return source, store


def _plan(store: Path, profile: str, path: Path) -> Path:
    svc = Service()
    opened = svc.stores.open(str(store))
    made = svc.plans.plan_stream(opened, svc.profiles.profile(opened, profile), now=PLANNED)
    svc.plans.write_stream(made, str(path))
    return path


def _fresh(source: Path, store: Path) -> None:
    shutil.rmtree(store.with_name(store.name + ".memtui"), ignore_errors=True)
    shutil.copyfile(source, store)


def _whole(source: Path, store: Path, plan: Path, skip: frozenset[str] = frozenset()) -> bytes:
    """The store after the plan file is read whole and its default actions but `skip`
    applied, as before: one transaction."""
    _fresh(source, store)
    svc = Service()
    opened = svc.stores.open(str(store))
    loaded = svc.plans.load_plan(str(plan), opened)
    approved = [a for a in loaded.default_approved() if a not in skip]
    apply_plan(opened, loaded, approved, now=APPLIED)
    return store.read_bytes() + _sidecar(store)


def _sidecar(store: Path) -> bytes:
    ledger = store.with_name(store.name + ".memtui") / "ledger.jsonl"
    return ledger.read_bytes() if ledger.exists() else b""


def _runs(store: Path, plan: Path) -> list[set[str | None]]:
    """Each run's users, as `memtui apply` reads the file."""
    opened = Service().stores.open(str(store))
    _, runs = read_by_user(str(plan), opened, Service().plans.seal_key())
    return [{m.user_id for a in run.actions for m in a.before} for run in runs]


@pytest.mark.parametrize(
    ("fmt", "profile"), [("native", "longterm"), ("native", "default"), ("pi", "default")]
)
def test_memtui_apply_reads_the_plan_a_user_at_a_time_and_commits_what_the_whole_file_does(
    fmt: str, profile: str, tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMTUI_NOW", APPLIED.isoformat())
    source, store = _store(tmp_path, fmt)
    plan = _plan(store, profile, tmp_path / "plan.json")
    expected = _whole(source, store, plan)
    _fresh(source, store)
    users = list(dict.fromkeys(m.user_id for m in open_store(str(store)).memories()))
    assert _runs(store, plan) == [{user} for user in users]  # not read whole
    done = cli("apply", store, plan, "--yes")
    assert done.code == 0, done.err
    assert "applied" in done.out
    assert store.read_bytes() + _sidecar(store) == expected


def test_a_skipped_action_is_left_out_as_when_the_file_is_read_whole(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMTUI_NOW", APPLIED.isoformat())
    source, store = _store(tmp_path)
    plan = _plan(store, "longterm", tmp_path / "plan.json")
    actions = json.loads(plan.read_text())["actions"]
    depended = {d for a in actions for d in a.get("depends_on") or ()}
    free = next(a["id"] for a in actions if a["kind"] == "merge" and a["id"] not in depended)
    expected = _whole(source, store, plan, frozenset({free}))
    _fresh(source, store)
    done = cli("apply", store, plan, "--yes", "--skip", free)
    assert done.code == 0, done.err
    assert store.read_bytes() + _sidecar(store) == expected
    # skipping an action another one needs: refused in the same words, nothing written
    _fresh(source, store)
    needed = _needed(store, plan)
    whole = cli(
        "apply", store, plan, "--yes", "--only", ",".join(_approved_but(store, plan, needed))
    )
    _fresh(source, store)
    by_user = cli("apply", store, plan, "--yes", "--skip", needed)
    assert by_user.code == whole.code == 1
    assert by_user.err == whole.err and "which is not approved" in by_user.err
    assert store.read_bytes() == source.read_bytes()


def _needed(store: Path, plan: Path) -> str:
    """An approved action another approved action depends on."""
    svc = Service()
    loaded = svc.plans.load_plan(str(plan), svc.stores.open(str(store)))
    approved = set(loaded.default_approved())
    return next(d for a in loaded.actions if a.id in approved for d in a.depends_on)


def _approved_but(store: Path, plan: Path, left_out: str) -> list[str]:
    svc = Service()
    opened = svc.stores.open(str(store))
    return [a for a in svc.plans.load_plan(str(plan), opened).default_approved() if a != left_out]


def test_a_user_whose_actions_come_in_two_runs_has_the_file_read_whole(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMTUI_NOW", APPLIED.isoformat())
    source, store = _store(tmp_path)
    plan = _plan(store, "longterm", tmp_path / "plan.json")
    value = json.loads(plan.read_text())
    depended = {d for a in value["actions"] for d in a.get("depends_on") or ()}
    moved = next(
        n
        for n, a in enumerate(value["actions"])
        if a["kind"] == "merge" and a["id"] not in depended and not a.get("depends_on")
    )
    value["actions"].append(value["actions"].pop(moved))  # its user's again at the end
    plan.write_text(json.dumps(value, ensure_ascii=False))
    with pytest.raises(NotByUser):
        _runs(store, plan)
    expected = _whole(source, store, plan)
    _fresh(source, store)
    done = cli("apply", store, plan, "--yes")
    assert done.code == 0, done.err
    assert store.read_bytes() + _sidecar(store) == expected


def test_a_store_changed_since_the_plan_is_named_as_the_whole_reading_names_it(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fourth user's entries changed: the runs before it check out, and still nothing is
    written, and every changed entry of the plan is counted."""
    monkeypatch.setenv("MEMTUI_NOW", APPLIED.isoformat())
    _, store = _store(tmp_path)
    plan = _plan(store, "longterm", tmp_path / "plan.json")
    opened = open_store(str(store))
    late = [m for m in opened.memories() if m.user_id == "user-3"][:3]
    for m in late:
        assert cli("edit", store, "--importance", "0.99", "--", m.id).code == 0
    before = store.read_bytes()
    svc = Service()
    with pytest.raises(ConflictError) as whole:
        svc.plans.load_plan(str(plan), svc.stores.open(str(store)))
    assert "changed since the plan was made" in str(whole.value)
    done = cli("apply", store, plan, "--yes")
    assert done.code == 1
    assert done.err == f"memtui: {whole.value}\n"
    assert store.read_bytes() == before
