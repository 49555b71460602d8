"""Where merged wording came from, in the merge screen's preview and a plan's merge detail."""

from __future__ import annotations

import os
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Static, Tree

from memtui.model import Memory
from memtui.stores import create_native_store
from memtui.tui.screens.merge import MergeScreen
from memtui.tui.screens.plan import PlanScreen
from tests.conftest import NOW
from tests.test_tui_curate import app_for, ready

os.environ["TEXTUAL_ANIMATIONS"] = "none"

GARDEN = (
    "The user keeps a vegetable garden behind the house with tomatoes, beans, courgettes, "
    "lettuce, carrots, onions, garlic, potatoes, strawberries, raspberries and herbs such as "
    "basil, parsley, mint, thyme and rosemary; she waters it every evening in summer, "
    "composts kitchen scraps in two bins, saves seeds from the best tomatoes each autumn, "
    "and swaps seedlings with neighbours at the spring market in the village square."
)
GREENHOUSE = (
    "Her greenhouse holds peppers, chillies, aubergines and a fig tree from her grandfather."
)
TEXTS = [
    GARDEN,  # 418 characters: the greenhouse clause does not fit in the cap of 500
    GARDEN[:330] + ". " + GREENHOUSE,
    "The user plays violin in the community orchestra on Thursday evenings. She sings in a choir.",
    "The user plays violin in the community orchestra every Thursday evening. "
    "She started at age nine.",
    "The user drinks [bold]green tea[/bold] every morning.",
    "The user drinks green tea in the morning, never coffee.",
]


def store(tmp_path: Path) -> Path:
    path = tmp_path / "garden.json"
    memories = [
        Memory(id=f"g{n}", content=text, user_id="u1", created_at=NOW)
        for n, text in enumerate(TEXTS)
    ]
    create_native_store(path, memories, now=NOW, kind="create", reason="test")
    return path


async def detail_of(pilot: Pilot, screen: PlanScreen, action_id: str) -> str:
    screen.query_one("#actions", Tree).move_cursor(screen._action_nodes[action_id])
    await pilot.pause()
    return str(screen.query_one("#action-detail-body", Static).render())


async def test_plan_detail_marks_each_clause_with_its_member(tmp_path: Path) -> None:
    app = app_for(store(tmp_path))
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await pilot.press("p")
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, PlanScreen) and screen.plan is not None
        merges = {a.before[0].id[:2]: a for a in screen.plan.actions if a.kind == "merge"}
        # g4/g5 too: absorbing g5 into g4's wording would lose "never coffee"
        assert set(merges) == {"g0", "g2", "g4"}

        violin = await detail_of(pilot, screen, merges["g2"].id)
        assert "Where the wording came from" in violin
        assert "She started at age nine.[1]" in violin
        assert "She sings in a choir.[2]" in violin
        assert "[1] g3 (the base)" in violin and "[2] g2\n" in violin

        garden = await detail_of(pilot, screen, merges["g0"].id)
        assert "village square.[1]" in garden
        assert "kept the base; nothing else fitted the cap" in garden
        assert f"left out [2] {GREENHOUSE}" in garden
        assert "[2] g1 (over the cap)" in garden


async def test_merge_preview_marks_each_clause_with_its_member(tmp_path: Path) -> None:
    app = app_for(store(tmp_path))
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        app.open_merge([app.store.get("g4"), app.store.get("g5")])  # type: ignore[union-attr]
        await ready(pilot)
        assert isinstance(app.screen, MergeScreen)
        shown = str(app.screen.query_one("#result-body", Static).render())
        # shown literally; the native store's rule (memtui's): the base, then the clause the
        # other member adds
        assert "[bold]green tea[/bold] every morning.[1] The user drinks green tea" in shown
        assert "[1] g4 (the base)" in shown and "[2] g5" in shown
        await pilot.click("#s-keep-base")
        await pilot.pause()
        shown = str(app.screen.query_one("#result-body", Static).render())
        assert "every morning.[1]\n" in shown and "[2] g5 (adds nothing new)" in shown
