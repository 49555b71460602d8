"""One binding table (tui/bindings.py) feeds the keys, the footer, the help, the palette and the
[keymap] check: what one says, the others say."""

from __future__ import annotations

import os
import re
from pathlib import Path

from textual.binding import Binding

from memtui.tui.bindings import BY_ID, TABLE
from memtui.tui.help_sections import memtui_screens
from memtui.tui.keymap_check import screens_and_bindings
from memtui.tui.modals import ReasonConfirmScreen
from memtui.tui.widgets.memory_table import MemoryTable
from tests.test_tui_keys import app_for, demo, ready, transactions  # noqa: F401

os.environ["TEXTUAL_ANIMATIONS"] = "none"

TUI = Path(__file__).parent.parent / "memtui" / "tui"


def test_every_binding_with_an_id_is_declared_in_the_table_only() -> None:
    from memtui.tui.app import MemtuiApp

    for cls in (MemtuiApp, MemoryTable, *memtui_screens()):
        own = [b for b in cls.__dict__.get("BINDINGS", []) if isinstance(b, Binding) and b.id]
        assert [b.id for b in own] == [k.id for k in TABLE.get(cls.__name__, ())], cls
        for binding in own:
            key = BY_ID[binding.id]  # type: ignore[index]
            assert (binding.key, binding.action, binding.description, binding.show) == (
                key.keys,
                key.action,
                key.description,
                key.show,
            )
    declared = [
        path.name
        for path in TUI.glob("*.py")
        if path.name != "bindings.py" and re.search(r"Binding\([^)]*id=", path.read_text())
    ]
    assert declared == []


def test_the_keymap_check_knows_every_id_of_the_table() -> None:
    from memtui.tui.app import MemtuiApp

    known = {b.id for _, bindings in screens_and_bindings(MemtuiApp) for b in bindings}
    assert known == set(BY_ID)


async def test_the_palette_offers_each_keyed_command_with_its_key_and_runs_it(
    demo: Path,  # noqa: F811
) -> None:
    before = transactions(demo)
    app = app_for(demo)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        commands = {name: (help_text, run) for name, help_text, run in app.palette_commands()}
        named = [k for keys in TABLE.values() for k in keys if k.palette]
        assert len(commands) >= len(named) and len({k.palette for k in named}) == len(named)
        assert commands["entry: delete"][0].endswith("(x)")
        assert commands["view: help"][0].endswith("(?)")
        commands["entry: delete"][1]()  # as x: asks first
        await ready(pilot)
        assert isinstance(app.screen, ReasonConfirmScreen)
        await pilot.press("escape")
        await ready(pilot)
    assert transactions(demo) == before
