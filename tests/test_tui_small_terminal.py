"""A new user's first hour at 80x24: what each screen shows fits, and says the right thing."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from itertools import combinations
from pathlib import Path

import pytest
from textual.pilot import Pilot

from memtui.demo import make_demo_memories
from memtui.stores import create_native_store
from memtui.stores.ledger import Transaction
from memtui.tui.modals import ConfirmScreen
from memtui.tui.screens.clusters import ClustersScreen
from memtui.tui.screens.history import transaction_detail
from memtui.tui.screens.plan import PlanScreen
from memtui.views import action_subject
from tests.conftest import NOW, CliResult
from tests.screen_text import screen_lines, screen_text
from tests.test_tui_walkthrough import app_for, ready, settled

SMALL = (80, 24)


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    path = tmp_path / "demo.json"
    create_native_store(path, make_demo_memories(120, 5, NOW), now=NOW, kind="demo", reason="t")
    return path


async def test_merge_of_three_shows_every_member_and_which_of_how_many(demo: Path) -> None:
    app = app_for(demo)
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        user = Counter(m.user_id for m in app.model.memories if m.visible).most_common(1)[0][0]
        ids = [m.id for m in app.model.memories if m.user_id == user and m.visible][:3]
        app.model.marked = set(ids)
        await pilot.press("m")
        await ready(pilot)
        text = screen_text(app)
        top = "\n".join(screen_lines(app)[:10])
    assert "Merge 3 entries" in text
    for n in (1, 2, 3):
        assert f"{n} of 3" in text
    assert all(ident in top for ident in ids)  # side by side, none scrolled out of sight
    for choice in ("by rule", "best entry", "my words"):
        assert choice in text  # the wording choices are not cut


async def _shown_after(path: Path, *keys: str) -> list[str]:
    """The screen's lines at 80×24 after opening `path` and pressing `keys`, each settled."""
    app = app_for(path)
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        for key in keys:
            await pilot.press(key)
            await ready(pilot)
        return screen_lines(app)


async def test_decay_legend_fits_and_names_the_stores_profile(demo: Path) -> None:
    lines = await _shown_after(demo, "d")
    text = "\n".join(lines)
    for name in ("default profile ×0.995/day", "pi", "halflife", "ebbinghaus", "line 0.3"):
        assert f"━━ {name}" in text or f"┄┄ {name}" in text, name
    side = " ".join(line.rsplit("│", 1)[-1].strip() for line in lines[:13] if "│" in line)
    assert "this store's profile default: longterm decay" in side
    assert "(this store)" not in text
    assert "below 0.3 (default profile)" in text


async def test_clusters_fit_and_their_keys_are_in_the_footer(demo: Path) -> None:
    lines = await _shown_after(demo, "c")
    assert "threshold 0.55  ·  12 clusters, 24 entries" in lines[1]
    assert "y Same" in lines[-1] and "n Not same" in lines[-1]
    # each cluster in the list on one row across the screen, its user at the end; the members
    # below the list (at 80 columns a column beside it left the content ~18 characters)
    rows = [line for line in lines if line.startswith("▊   2 ")]
    assert len(rows) >= 5
    users = ("alice", "bob", "sam", "li.na", "dana", "chen.wei")
    assert all(row.rstrip(" ▎▇▆").rstrip().endswith(users) for row in rows), rows
    assert max(len(row.rstrip(" ▎▇▆").rsplit("  ", 1)[0]) for row in rows) >= 60
    assert any("pairwise scores" in line or "entries ·" in line for line in lines[10:])


async def _clusters_of_three(pilot: Pilot) -> ClustersScreen:
    await ready(pilot)
    await pilot.press("c")
    await ready(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ClustersScreen)
    while screen.result is None or len(screen.result.clusters[0]) < 3:
        await pilot.press("minus")
        await ready(pilot)
    return screen


async def test_n_on_a_group_of_three_labels_every_pair_different_after_asking(
    demo: Path, cli: Callable[..., CliResult]
) -> None:
    app = app_for(demo)
    async with app.run_test(size=SMALL) as pilot:
        screen = await _clusters_of_three(pilot)
        assert screen.result is not None
        group = screen.result.clusters[0]
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        pairs = len(group) * (len(group) - 1) // 2
        assert f"Label all {pairs} pairs of these {len(group)} entries" in screen_text(app)
        await pilot.press("y")
        await pilot.pause()
    labels = json.loads(cli("labels", demo, "--json").out)
    verdicts = {tuple(label["ids"]): label["same"] for label in labels}
    assert verdicts == {tuple(sorted(p)): False for p in combinations(group, 2)}


async def test_n_on_a_group_of_three_answered_no_labels_nothing(
    demo: Path, cli: Callable[..., CliResult]
) -> None:
    app = app_for(demo)
    async with app.run_test(size=SMALL) as pilot:
        await _clusters_of_three(pilot)
        await pilot.press("n")
        await pilot.pause()
        await pilot.press("n")  # the question's "no"
        await pilot.pause()
        assert isinstance(app.screen, ClustersScreen)
    assert json.loads(cli("labels", demo, "--json").out or "[]") == []


async def test_a_new_entry_is_highlighted_and_the_toast_leaves_the_status_bar(
    demo: Path,
) -> None:
    app = app_for(demo)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await ready(pilot)
        await pilot.press("down", "down", "down", "n")
        await pilot.pause()
        await pilot.press(*"A brand new memory", "ctrl+s")
        await pilot.pause()
        before = app.commits_settled
        await pilot.press("y")
        await settled(pilot, before)
        lines = screen_lines(app)
        current = app.home.table.current
    assert current is not None and current.content == "A brand new memory"
    assert any("Added " in line for line in lines)  # the toast is there …
    status = lines[-2]
    assert "121 entries" in status and "shown" in status  # … and the counts are not under it


# -- the plan review: one plan on opening, rows that say what each action touches ---------------


async def test_opening_the_plan_review_plans_once_and_warns_of_nothing(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = app_for(demo)
    planned: list[str] = []
    plan = app.service.plans.plan

    def counting_plan(*args: object, **kw: object) -> object:
        planned.append("plan")
        return plan(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(app.service.plans, "plan", counting_plan)
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        await pilot.press("p")
        await ready(pilot)
        await ready(pilot)  # a second plan, had the chooser started one, would be done too
        screen = app.screen
        assert isinstance(screen, PlanScreen) and screen.plan is not None
        said = [n.message for n in app._notifications]
    assert planned == ["plan"]  # the profile chooser's first value does not plan again
    assert not any("cancel" in message.lower() for message in said)


async def test_plan_rows_show_the_memory_each_action_touches_at_80x24(demo: Path) -> None:
    app = app_for(demo)
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        await pilot.press("p")
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, PlanScreen) and screen.plan is not None
        lines = screen_lines(app)
        plan = screen.plan
    rows = [line for line in lines if line.startswith(("├── ", "└── "))]
    assert len(rows) >= 8
    for row in rows:
        ident = row.split()[2]
        subject = action_subject(plan.action(ident))
        assert f"{ident} {subject[:8]}" in row, row
    # the keys summary fits one line: the review keeps the rest of the screen
    assert any(line.strip().startswith("approved ") for line in lines)
    assert not any("saves the plan" in line for line in lines)


async def test_the_new_entry_form_outlines_where_to_type_the_content(demo: Path) -> None:
    app = app_for(demo)
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        await pilot.press("n")
        await ready(pilot)
        lines = screen_lines(app)
        await pilot.press(*"I like tea")
        await pilot.pause()
        typed = screen_lines(app)
    row = next(i for i, line in enumerate(lines) if line.lstrip().startswith("content"))
    assert "│ what the agent should remember" in lines[row]
    top = next(i for i in range(row, -1, -1) if "╭" in lines[i])
    bottom = next(i for i in range(row, len(lines)) if "╰" in lines[i])
    box = lines[top : bottom + 1]
    assert bottom - top >= 4  # room for a few lines of text
    assert all(line.rstrip().endswith(("╮", "│", "╯")) for line in box)
    assert "│ I like tea" in typed[row]  # the outlined box is where the typing goes
    assert any(line.lstrip().startswith("importance") for line in lines[bottom:])


async def test_the_decay_entry_summary_gives_each_model_one_row_at_80x24(demo: Path) -> None:
    app = app_for(demo)
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        await pilot.press("d")
        await ready(pilot)
        lines = screen_lines(app)
    side = [line.rsplit("│", 1)[-1].strip() for line in lines[:13] if "│" in line]
    assert "now  30d  cross" in side
    row = re.compile(
        r"^(default|pi|halflife|ebbinghaus) \d\.\d\d \d\.\d\d +(\d+(\.\d)?d|never|below)$"
    )
    models = [m.group(1) for m in map(row.match, side) if m]
    assert models == ["default", "pi", "halflife", "ebbinghaus"]  # the store's own first
    assert "cross: days until below 0.3" in side


async def test_after_applying_a_plan_the_cursor_stays_on_its_entry(demo: Path) -> None:
    app = app_for(demo)
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        await pilot.press("down", "down")
        await ready(pilot)
        here = app.home.table.current
        assert here is not None
        await pilot.press("p")
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, PlanScreen) and screen.plan is not None
        made = [a for a in screen.plan.actions if a.kind == "merge" and a.id in screen.approved]
        assert len(made) >= 2  # the plan writes several new entries
        untouched = here.id not in {t for a in screen.plan.actions for t in a.targets}
        before = app.commits_settled
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await settled(pilot, before)
        current = app.home.table.current
    assert untouched and current is not None and current.id == here.id


def test_the_history_detail_gives_its_time_to_the_second() -> None:
    at = NOW + timedelta(microseconds=123456)
    tx = Transaction(7, at, "user", "edit", "one edit", [], None, None, "committed")
    first = transaction_detail(tx, None).plain.splitlines()[0]
    assert first == "#7 edit  by user at 2026-11-30T12:00:00Z"  # no fraction to wrap at 80


def dots(app: object) -> dict[str, str]:
    row = next(line for line in screen_lines(app) if "by rule" in line)  # type: ignore[arg-type]
    return {name: dot for dot, name in re.findall(r"([●○])▌ (by rule|best entry|my words)", row)}


async def test_the_merge_strategy_shows_one_dot_the_chosen_one(demo: Path) -> None:
    app = app_for(demo)
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        user = Counter(m.user_id for m in app.model.memories if m.visible).most_common(1)[0][0]
        app.model.marked = {m.id for m in app.model.memories if m.user_id == user and m.visible}
        app.model.marked = set(sorted(app.model.marked)[:2])
        await pilot.press("m")
        await ready(pilot)
        assert dots(app) == {"by rule": "●", "best entry": "○", "my words": "○"}
        await pilot.press(*"mine")  # the text box has focus: typing picks "my words"
        await ready(pilot)
        assert dots(app) == {"by rule": "○", "best entry": "○", "my words": "●"}


@pytest.mark.parametrize(
    ("day", "shown"),
    [(None, "never"), (0.0, "already"), (-2.0, "already"), (0.01, "< 0.1d"), (3.25, "3.2d")],
)
def test_the_decay_screen_says_when_an_entry_crosses_the_line_one_way(
    day: float | None, shown: str
) -> None:
    from memtui.tui.screens.decay import crossing_text

    assert crossing_text(day) == shown
