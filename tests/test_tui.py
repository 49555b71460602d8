"""The TUI, driven as a user drives it (Textual's Pilot): open, scroll, sort, filter, mark,
lineage, restore, outside changes, themes, help, hostile text, small terminals, the mouse."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from textual.pilot import Pilot

from memtui.config import Settings, load_settings
from memtui.demo import make_demo_memories
from memtui.model import Status
from memtui.stores import Change, create_native_store, open_store
from memtui.tui import make_app
from memtui.tui.app import MemtuiApp
from memtui.tui.modals import ConfirmScreen, HelpScreen
from memtui.tui.widgets.lineage import LineageScreen
from memtui.tui.widgets.memory_table import MemoryTable
from tests.conftest import FIXTURES, NOW

os.environ["TEXTUAL_ANIMATIONS"] = "none"


@pytest.fixture
def demo_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A 120-entry demo store, opened by a relative path (stable in snapshots)."""
    monkeypatch.chdir(tmp_path)
    create_native_store(
        Path("demo.json"), make_demo_memories(120, 5, NOW), now=NOW, kind="demo", reason="test"
    )
    return Path("demo.json")


def app_for(path: Path | str, **kw: object) -> MemtuiApp:
    return make_app(
        str(path),
        kw.pop("settings", Settings()),
        now=NOW,  # type: ignore[arg-type]
        watch_interval=kw.pop("watch_interval", 0),
        **kw,
    )  # type: ignore[arg-type]


async def ready(pilot: Pilot) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def status_text(app: MemtuiApp) -> str:
    return str(app.query_one("#status").render())


def table(app: MemtuiApp) -> MemoryTable:
    return app.query_one(MemoryTable)


def rendered_text(app: MemtuiApp, renderable: object) -> str:
    """What a Rich renderable puts on the terminal, as plain text."""
    options = app.console.options.update(width=400)
    return "".join(seg.text for seg in app.console.render(renderable, options))


def row_text(app: MemtuiApp, screen_row: int) -> str:
    return table(app).render_line(screen_row).text


async def test_open_shows_the_store(demo_store: Path) -> None:
    app = app_for(demo_store)
    async with app.run_test(size=(120, 32)) as pilot:
        await ready(pilot)
        assert "120 entries" in status_text(app) and "(native)" in status_text(app)
        visible = len(app.model.view)
        assert visible == sum(1 for m in open_store(demo_store).memories() if m.visible)
        header = row_text(app, 0)
        assert "importance" in header and "content" in header
        first = app.model.memory_at(0)
        assert first is not None and first.content[:15] in row_text(app, 1)


async def test_scroll_page_down_and_end(demo_store: Path) -> None:
    app = app_for(demo_store)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        t = table(app)
        await pilot.press("pagedown")
        assert t.cursor > 20
        await pilot.press("end")
        assert t.cursor == len(app.model.view) - 1
        last = app.model.memory_at(t.cursor)
        assert last is not None
        assert any(last.content[:12] in row_text(app, y) for y in range(1, 28))
        await pilot.press("home")
        assert t.cursor == 0 and t.scroll_y == 0


async def test_sort_by_key_and_by_header_click(demo_store: Path) -> None:
    app = app_for(demo_store)
    async with app.run_test(size=(160, 30)) as pilot:
        await ready(pilot)
        await pilot.click(MemoryTable, offset=(5, 0))  # the importance header
        assert app.model.sort_key == "importance" and app.model.descending
        values = [app.model.memory_at(r).importance for r in range(len(app.model.view))]  # type: ignore[union-attr]
        assert values == sorted(values, reverse=True)
        await pilot.press("O")
        assert not app.model.descending
        await pilot.press("o")
        assert app.model.sort_key == "content"
        assert "sort content" in status_text(app)


async def test_filter_as_you_type(demo_store: Path) -> None:
    app = app_for(demo_store)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        before = len(app.model.view)
        await pilot.press("slash", "I", " ", "l", "o", "v", "e")
        shown = app.model.view
        assert 0 < len(shown) < before
        assert all("i love" in app.model.memories[i].content.lower() for i in shown)
        assert "filter 'I love'" in status_text(app)
        await pilot.press("escape")
        assert len(app.model.view) == before and "filter" not in status_text(app)


async def test_quick_filters_and_hidden_statuses(demo_store: Path) -> None:
    app = app_for(demo_store)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        hidden = [m for m in app.model.memories if not m.visible]
        assert hidden and all(app.model.index[m.id] not in app.model.view for m in hidden)
        await pilot.press("full_stop")
        assert len(app.model.view) == 120
        from memtui.tui.widgets.table_model import QuickFilters

        app.home.apply_filters(QuickFilters(user="alice"))
        await pilot.pause()
        assert app.model.view and all(
            app.model.memories[i].user_id == "alice" for i in app.model.view
        )
        assert "user alice" in status_text(app)


async def test_mark_rows(demo_store: Path) -> None:
    app = app_for(demo_store)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        await pilot.press("space", "space")
        assert len(app.model.marked) == 2 and "2 marked" in status_text(app)
        assert row_text(app, 1).startswith("*") and row_text(app, 2).startswith("*")
        await pilot.press("up", "space")
        assert len(app.model.marked) == 1


async def test_keymap_from_the_config(demo_store: Path) -> None:
    app = app_for(demo_store, settings=Settings(keymap={"table.mark": "t"}))
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        await pilot.press("t")
        assert len(app.model.marked) == 1


async def _open_lineage_of_superseded(app: MemtuiApp, pilot: Pilot) -> str:
    await pilot.press("full_stop")
    superseded = next(m for m in app.model.memories if m.status is Status.SUPERSEDED)
    t = table(app)
    t.cursor = app.model.position_of(superseded.id)  # type: ignore[assignment]
    await pilot.press("l")
    await ready(pilot)
    assert isinstance(app.screen, LineageScreen)
    return superseded.id


async def test_lineage_shows_the_chain_both_ways(demo_store: Path) -> None:
    app = app_for(demo_store)
    async with app.run_test(size=(140, 34)) as pilot:
        await ready(pilot)
        ident = await _open_lineage_of_superseded(app, pilot)
        chain = app.screen.chain  # type: ignore[attr-defined]
        assert chain.id == ident and chain.superseded_by
        labels = [str(node.label) for node in app.screen.query_one("Tree").root.children]
        assert labels == ["replaced by (newer)", "replaces (older)"]
        await pilot.press("escape")
        assert not isinstance(app.screen, LineageScreen)


async def test_restore_from_lineage_is_one_undoable_transaction(demo_store: Path) -> None:
    app = app_for(demo_store)
    async with app.run_test(size=(140, 34)) as pilot:
        await ready(pilot)
        ident = await _open_lineage_of_superseded(app, pilot)
        tree = app.screen.query_one("Tree")
        tree.move_cursor(tree.root)  # the superseded entry itself
        before = app.commits_settled
        await pilot.press("r")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        for _ in range(200):
            await pilot.pause(0.02)
            if app.commits_settled > before:
                break
        await ready(pilot)
        assert not isinstance(app.screen, LineageScreen)
        store = open_store(demo_store)
        assert store.get(ident).status is Status.ACTIVE
        last = store.history()[0]
        assert last.kind == "restore" and ident in last.memory_ids
        store.undo(last.id, now=NOW)
        assert open_store(demo_store).get(ident).status is Status.SUPERSEDED


async def test_outside_change_is_noticed_and_reload_picks_it_up(fixture_copy) -> None:  # type: ignore[no-untyped-def]
    path = fixture_copy("realistic-store.json")
    app = app_for(path, watch_interval=0.2)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        data = json.loads(path.read_bytes())
        data["memories"].append(
            {**data["memories"][0], "id": "mem_outside", "content": "written by the agent"}
        )
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2))
        os.replace(tmp, path)
        for _ in range(30):
            await pilot.pause(0.1)
            if app.outside_change:
                break
        assert app.outside_change and "changed on disk" in status_text(app)
        await pilot.press("ctrl+r")
        await ready(pilot)
        assert "301 entries" in status_text(app) and not app.outside_change


async def test_a_write_refused_by_an_outside_change_loses_nothing(fixture_copy) -> None:  # type: ignore[no-untyped-def]
    source = open_store(FIXTURES / "items.jsonl")
    path = fixture_copy("items.jsonl")
    app = app_for(path)
    async with app.run_test(size=(140, 34)) as pilot:
        await ready(pilot)
        await pilot.press("full_stop")
        t = table(app)
        t.cursor = app.model.position_of("4")  # type: ignore[assignment]
        # the agent rewrites entry 4 while memtui has it on screen
        outsider = open_store(path)
        four = outsider.get("4")
        outsider.commit(
            [Change(four, four.with_(content="用户在一家咨询公司工作"))],
            actor="user",
            kind="edit",
            reason="agent",
            now=NOW,
        )
        data = path.read_bytes()
        await pilot.press("l")
        await ready(pilot)
        app.screen.query_one("Tree").move_cursor(app.screen.query_one("Tree").root)
        before = app.commits_settled
        await pilot.press("r", "y")
        for _ in range(200):
            await pilot.pause(0.02)
            if app.commits_settled > before:
                break
        await ready(pilot)
        assert path.read_bytes() == data
        assert app.outside_change
        assert source.get("4").content != open_store(path).get("4").content


async def test_theme_switch_persists(demo_store: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("# my settings\n[store]\nbackups = 5\n")
    app = app_for(demo_store, config_path=config)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        assert app.theme == "memtui-dark"
        commands = {name: run for name, _, run in app.palette_commands()}
        commands["theme: memtui-paper"]()
        await pilot.pause()
        assert app.theme == "memtui-paper" and "theme memtui-paper" in status_text(app)
    assert load_settings(config).theme == "memtui-paper"
    assert config.read_text().startswith("# my settings\n[store]\nbackups = 5\n")


async def test_unknown_theme_falls_back_with_a_notice(demo_store: Path) -> None:
    app = app_for(demo_store, settings=Settings(theme="no-such-theme"))
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        assert app.theme == "memtui-dark"
        assert any("no-such-theme" in n.message for n in app._notifications)


def help_text(app: MemtuiApp) -> str:
    """The help screen's text as it is on screen (all of it, not only what fits)."""
    from textual.widgets import Static

    return "\n".join(
        rendered_text(app, static.content) for static in app.screen.query(Static).results(Static)
    )


async def test_help_lists_every_binding_of_every_screen(demo_store: Path) -> None:
    import importlib
    import pkgutil

    from textual.binding import Binding
    from textual.screen import Screen

    import memtui.tui

    for module in pkgutil.walk_packages(memtui.tui.__path__, "memtui.tui."):
        importlib.import_module(module.name)  # the screens home opens on first use too

    def screens(cls: type) -> list[type]:
        return [s for sub in cls.__subclasses__() for s in (sub, *screens(sub))]

    ours = {c for c in screens(Screen) if c.__module__.startswith("memtui.tui.")}
    assert {c.__name__ for c in ours} >= {"HomeScreen", "PlanScreen", "HistoryScreen"}
    app = app_for(demo_store)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        shown = help_text(app)
        for cls in (MemtuiApp, MemoryTable, *ours):
            for binding in cls.__dict__.get("BINDINGS", []):
                assert isinstance(binding, Binding)
                if binding.description:
                    assert f"{binding.tooltip or binding.description}  {binding.id}" in shown, (
                        cls.__name__,
                        binding.id,
                    )
        assert "Plan review" in shown and "History" in shown
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_help_lists_a_screen_added_later(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys
    from types import ModuleType
    from typing import ClassVar

    from textual.binding import Binding, BindingType
    from textual.screen import Screen

    class NewScreen(Screen[None]):
        HELP_TITLE = "A screen written after the help"
        BINDINGS: ClassVar[list[BindingType]] = [
            Binding("z", "zap", "Zap", id="new.zap", tooltip="Zap the highlighted entry")
        ]

    module = ModuleType("memtui.tui.new_screen")
    module.NewScreen = NewScreen  # type: ignore[attr-defined]
    NewScreen.__module__ = module.__name__
    monkeypatch.setitem(sys.modules, module.__name__, module)
    app = app_for(demo_store)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("question_mark")
        shown = help_text(app)
        assert "A screen written after the help" in shown
        assert "Zap the highlighted entry  new.zap" in shown
        assert "?" in shown and "/" in shown


HOSTILE = (
    "\x1b[31mred\x1b[0m [bold red]x[/] [link=https://evil.example]click[/link] "
    "\x1b]52;c;aGVsbG8=\x07 zero\u200bwidth \u202eevil\u202c line1\nline2 " + "long " * 2000
)


async def test_memory_text_is_shown_literally(tmp_path: Path) -> None:
    path = tmp_path / "hostile.json"
    path.write_text(
        json.dumps(
            {
                "version": 1,
                "memories": [
                    {"id": "h1", "content": HOSTILE, "tags": ["[b]tag[/b]"]},
                    {"id": "h2", "content": "ordinary"},
                ],
            }
        )
    )
    app = app_for(path)
    async with app.run_test(size=(180, 34)) as pilot:
        await ready(pilot)
        t = table(app)
        t.cursor = app.model.position_of("h1")  # type: ignore[assignment]
        await pilot.pause(0.3)  # the detail pane follows the cursor after a moment
        row = row_text(app, t.cursor + 1)
        assert "[bold red]x[/]" in row and "\\x1b[31mred" in row
        assert "\x1b" not in row and "\u202e" not in row and "\u200b" not in row
        text = rendered_text(app, app.query_one("#detail-body").content)
        assert "[link=https://evil.example]click[/link]" in text and "\\x1b]52;c;" in text
        assert "\x1b]52" not in text and "\x07" not in text and "\u202e" not in text
        assert "line1\nline2" in text  # the detail pane keeps the newline
        screenshot = app.export_screenshot()
        assert "\x1b]52" not in screenshot and "\u202e" not in screenshot
        await pilot.press("l")
        await ready(pilot)
        tree_text = str(app.screen.query_one("Tree").root.label)
        assert "[bold red]x[/]" in tree_text and "\x1b" not in tree_text


async def test_a_store_that_fails_to_load_says_so(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_bytes((FIXTURES / "example-store.json").read_bytes()[:300])
    app = app_for(path)
    async with app.run_test(size=(100, 24)) as pilot:
        await ready(pilot)
        message = rendered_text(app, app.query_one("#message").content)
        assert "could not open" in message and "not valid JSON" in message
        assert "failed to open" in status_text(app)
    assert path.read_bytes() == (FIXTURES / "example-store.json").read_bytes()[:300]


async def test_works_at_80_by_24_and_with_the_mouse(demo_store: Path) -> None:
    app = app_for(demo_store)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        header = row_text(app, 0)
        assert "content" in header and "importance" in header
        assert len(row_text(app, 1)) <= 80
        await pilot.click(MemoryTable, offset=(10, 4))
        assert table(app).cursor == 3
        assert not app.query_one("#detail").display  # too narrow: the table gets the width
        await pilot.press("v")
        await pilot.pause(0.3)
        shown = rendered_text(app, app.query_one("#detail-body").content)
        assert app.model.memory_at(3).id in shown  # type: ignore[union-attr]


def test_themes_folder_files_are_valid() -> None:
    from memtui.tui.themes import load_themes, themes_folder

    folder = themes_folder()
    assert folder is not None
    themes, problems = load_themes(folder)
    assert not problems, problems
    assert {t.name for t in themes} >= {"memtui-dark", "memtui-paper", "memtui-phosphor"}
    assert len(list(folder.glob("*.toml"))) == len(themes)


def test_a_bad_theme_file_is_reported_not_fatal(tmp_path: Path) -> None:
    from memtui.tui.themes import load_themes, themes_folder

    folder = themes_folder()
    assert folder is not None
    shutil.copytree(folder, tmp_path / "themes")
    (tmp_path / "themes" / "broken.toml").write_text('name = "broken"\nprimary = "not-a-colour"\n')
    themes, problems = load_themes(tmp_path / "themes")
    assert (
        len(themes) == 3 and problems[0].file == "broken.toml" and "primary" in problems[0].problem
    )


def test_which_store_memtui_opens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memtui.service import Service

    def resolve_store(store, settings, now):  # type: ignore[no-untyped-def]
        return Service(settings, clock=lambda: now).stores.store_to_open(store)

    monkeypatch.setenv("HOME", str(tmp_path))
    path, hint = resolve_store("given.json", Settings(), NOW)
    assert path == "given.json" and hint is None
    monkeypatch.setenv("MEMTUI_STORE", "from-env.json")
    assert resolve_store(None, Settings(default_store="configured.json"), NOW)[0] == "from-env.json"
    monkeypatch.delenv("MEMTUI_STORE")
    assert (
        resolve_store(None, Settings(default_store="configured.json"), NOW)[0] == "configured.json"
    )
    path, hint = resolve_store(None, Settings(), NOW)  # no pi store in this HOME
    assert path.endswith("memories.json") and hint and "memtui demo" in hint
    store = open_store(path)
    assert store.format_name == "native" and len(store) == 0
    pi = tmp_path / ".pi" / "agent" / "memory-store.json"
    pi.parent.mkdir(parents=True)
    shutil.copyfile(FIXTURES / "example-store.json", pi)
    assert resolve_store(None, Settings(), NOW)[0] == str(pi)


def test_demo_without_a_terminal_says_where_the_store_is(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("demo", "--out", tmp_path / "d.json")
    assert result.code == 0 and "d.json" in result.out and "not a terminal" in result.err
