"""Labelling pairs and the calibration curve in the TUI, and the pairs worth labelling."""

from __future__ import annotations

import itertools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Static

from memtui.model import Memory, Status
from memtui.service import Service
from memtui.stores import create_native_store
from memtui.tui.app import MemtuiApp
from memtui.tui.screens.calibration import CalibrationScreen
from memtui.tui.screens.label import LabelScreen
from memtui.tui.widgets.chart import ChartView
from tests.conftest import NOW, CliResult
from tests.test_tui_curate import app_for, ready

os.environ["TEXTUAL_ANIMATIONS"] = "none"

TEXTS = [
    ("u1", "The user drinks [bold]green tea[/bold] every morning before work."),
    ("u1", "The user drinks green tea in the morning, never coffee."),
    ("u1", "The user prefers coffee with oat milk in the afternoon."),
    ("u1", "The user drinks coffee with oat milk after lunch.\x1b[31m"),
    ("u1", "The user runs five kilometres every Saturday morning."),
    ("u1", "The user runs ten kilometres on Saturday mornings in the park."),
    ("u1", "The user's sister lives in Lisbon and works as a nurse."),
    ("u1", "The user's sister works as a nurse in Lisbon."),
    ("u2", "The user drinks green tea in the morning, never coffee."),
    ("u2", "The user runs five kilometres every Saturday morning."),
    ("u1", "The user runs five kilometres every Saturday morning (old)."),
]


@pytest.fixture
def tea(tmp_path: Path) -> Path:
    """A memtui store (merge line 0.55) with pairs on both sides of the line, markup and an
    escape in the text, a second user and an archived entry."""
    path = tmp_path / "tea.json"
    memories = [
        Memory(id=f"m{n:02d}", content=text, user_id=user, category="preference", created_at=NOW)
        for n, (user, text) in enumerate(TEXTS)
    ]
    memories[-1] = memories[-1].with_(status=Status.ARCHIVED)
    create_native_store(path, memories, now=NOW, kind="create", reason="test")
    return path


def shown(app: MemtuiApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def verdicts(cli: Callable[..., CliResult], path: Path) -> dict[tuple[str, ...], bool]:
    return {tuple(lb["ids"]): lb["same"] for lb in json.loads(cli("labels", path, "--json").out)}


# -- the pairs worth labelling --------------------------------------------------------------


def test_pairs_to_label_lie_near_the_line_on_both_sides_alternating(tea: Path) -> None:
    service = Service(clock=lambda: NOW)
    store = service.stores.open(tea)
    pairs = service.labels.pairs_to_label(store)
    ids = [(p.a.id, p.b.id) for p in pairs]
    # m06~m07 (0.85) is too sure to teach anything; m08, m09 are another user; m10 archived
    assert ids == [("m04", "m05"), ("m00", "m01"), ("m02", "m03")]
    assert [p.score >= p.line for p in pairs] == [True, False, False]
    assert all(abs(p.score - 0.55) <= 0.2 for p in pairs)
    assert all(p.method == "memtui" and set(p.scores) >= {"pi", "memtui"} for p in pairs)
    assert service.labels.pairs_to_label(service.stores.open(tea)) == pairs  # deterministic


def test_pairs_to_label_leave_out_labelled_pairs(tea: Path) -> None:
    service = Service(clock=lambda: NOW)
    store = service.stores.open(tea)
    service.labels.label(store, ["m05", "m04"], same=False)
    service.labels.label(store, ["m00", "m01", "m02"], same=True)  # a group decides its pairs too
    assert [(p.a.id, p.b.id) for p in service.labels.pairs_to_label(store)] == [("m02", "m03")]


def test_pairs_to_label_put_no_entry_in_two_pairs_running(
    fixture_copy: Callable[[str], Path],
) -> None:
    service = Service(clock=lambda: NOW)
    store = service.stores.open(fixture_copy("realistic-store.json"))
    pairs = service.labels.pairs_to_label(store, 60)
    assert len(pairs) == 60
    for before, after in itertools.pairwise(pairs):
        assert not {before.a.id, before.b.id} & {after.a.id, after.b.id}
        assert (before.score >= before.line) != (after.score >= after.line)
        assert before.a.user_id == before.b.user_id


# -- the labelling screen -------------------------------------------------------------------


async def test_labelling_screen_labels_skips_and_takes_back(
    tea: Path, cli: Callable[..., CliResult]
) -> None:
    data = tea.read_bytes()
    app = app_for(tea)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press("L")
        await ready(pilot)
        assert isinstance(app.screen, LabelScreen)
        assert "0 labelled, 0 the same memory" in shown(app, "#label-title")
        assert "runs five kilometres" in shown(app, "#side-a")
        assert "memtui 0.576 (above the merge line 0.55)" in shown(app, "#scores")
        await pilot.press("y")
        # the next pair, shown literally: markup stays as typed
        assert "[bold]green tea[/bold]" in shown(app, "#side-a")
        assert "1 labelled, 1 the same memory" in shown(app, "#label-title")
        await pilot.press("s")  # no verdict on the tea pair
        assert "oat milk after lunch.\\x1b[31m" in shown(app, "#side-b")
        await pilot.press("n")
        assert "2 labelled, 1 the same memory" in shown(app, "#label-title")
        assert "No more pairs to label" in shown(app, "#side-a")
        await pilot.press("u")  # takes back "not the same" and shows its pair again
        assert "1 labelled, 1 the same memory" in shown(app, "#label-title")
        assert "oat milk after lunch" in shown(app, "#side-b")
    assert tea.read_bytes() == data  # labels live beside the store
    assert verdicts(cli, tea) == {("m04", "m05"): True}


async def test_labels_from_the_screen_survive_a_reload(
    tea: Path, cli: Callable[..., CliResult]
) -> None:
    app = app_for(tea)
    async with app.run_test(size=(120, 34)) as pilot:
        await ready(pilot)
        app.home.action_label()
        await ready(pilot)
        await pilot.press("n")
    app = app_for(tea)
    async with app.run_test(size=(120, 34)) as pilot:
        await ready(pilot)
        await pilot.press("L")
        await ready(pilot)
        assert "1 labelled, 0 the same memory" in shown(app, "#label-title")
        assert "green tea" in shown(app, "#side-a")  # the labelled pair is not asked again
    assert verdicts(cli, tea) == {("m04", "m05"): False}


async def test_the_app_can_open_on_the_labelling_screen(tea: Path) -> None:
    app = app_for(tea)
    app.start_screen = "label"
    async with app.run_test(size=(120, 34)) as pilot:
        await ready(pilot)
        assert isinstance(app.screen, LabelScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, LabelScreen)


def test_label_without_ids_opens_the_labelling_screen(
    tea: Path, cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[tuple[str | None, str | None]] = []
    monkeypatch.setattr(
        "memtui.tui.run_app", lambda store, svc, start=None: opened.append((store, start)) or 0
    )
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert cli("label", tea).code == 0
    assert opened == [(str(tea), "label")]
    refused = cli("label", tea, "--same")
    assert refused.code == 2 and "need the entries' ids" in refused.err
    assert cli("label", tea, "m00", "m01", "--same").code == 0  # the CLI form still works


# -- the calibration curve ------------------------------------------------------------------


async def test_curve_with_too_few_labels_says_how_many_more(tea: Path) -> None:
    service = Service(clock=lambda: NOW)
    service.labels.label(service.stores.open(tea), ["m04", "m05"], same=True)
    app = app_for(tea)
    async with app.run_test(size=(120, 34)) as pilot:
        await ready(pilot)
        await pilot.press("L")
        await ready(pilot)
        await pilot.press("c")
        await ready(pilot)
        assert isinstance(app.screen, CalibrationScreen)
        assert not app.screen.query_one(ChartView).display
        body = shown(app, "#calibration-body")
        assert "29 more labelled pairs needed" in body
        assert "(now 1: 1 the same, 0 not)" in body


async def test_curve_shows_precision_recall_and_the_config_lines(
    fixture_copy: Callable[[str], Path],
) -> None:
    path = fixture_copy("realistic-store.json")
    service = Service(clock=lambda: NOW)
    store = service.stores.open(path)
    pairs, _, _ = service.profiles.pairs(store, "memtui", 0.05)
    for n, pair in enumerate(pairs[:40]):  # the 12 closest are the same memory
        service.labels.label(store, [pair.a, pair.b], same=n < 12)
    report = service.calibration.calibrate(store)
    assert service.calibration.calibration_shortfall(store) is None
    config = report.config_lines()
    assert config is not None
    app = app_for(path)
    async with app.run_test(size=(140, 45)) as pilot:
        await ready(pilot)
        app.home.action_calibration()
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, CalibrationScreen)
        await pilot.click("#method")
        await pilot.press("down", "down", "down", "down", "enter")  # pi → memtui
        await pilot.pause()
        assert "memtui: precision" in shown(app, "#calibration-title")
        data = screen.query_one(ChartView).data
        memtui = next(m for m in report.methods if m.method == "memtui")
        precision, recall = data.series
        assert precision.points == [(p.threshold, p.precision) for p in memtui.curve]
        assert recall.points == [(p.threshold, p.recall) for p in memtui.curve]
        assert memtui.recommended is not None
        assert data.marks[0][0] == memtui.recommended.threshold
        body = shown(app, "#calibration-body")
        assert "40 labelled pairs (12 the same memory)" in body
        assert all(line in body for line in config.splitlines())
