"""The TUI as a new user met it (issue 11): what crashed, what misled, where keys went astray.
Each test drives the keys that showed the problem and asserts what the user now sees."""

from __future__ import annotations

import asyncio
import io
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from textual import events
from textual.pilot import Pilot
from textual.widgets import Input, Tree

from memtui import locations
from memtui.model import Memory, Status
from memtui.service import History
from memtui.stores import open_store
from memtui.tui import make_app
from memtui.tui.app import HomeScreen, MemtuiApp
from memtui.tui.modals import ConfirmScreen, HelpScreen
from memtui.tui.screens.clusters import ClustersScreen
from memtui.tui.screens.merge import MergeScreen
from memtui.tui.screens.plan import PlanScreen
from memtui.tui.widgets.lineage import LineageScreen
from tests.conftest import NOW

os.environ["TEXTUAL_ANIMATIONS"] = "none"


def app_for(path: Path | str, **kw: object) -> MemtuiApp:
    return make_app(str(path), now=NOW, watch_interval=0, **kw)  # type: ignore[arg-type]


async def ready(pilot: Pilot) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def settled(pilot: Pilot, before: int) -> None:
    """Wait until the commit started after `before` has ended (done or refused)."""
    for _ in range(300):
        await pilot.pause(0.02)
        if pilot.app.commits_settled > before:  # type: ignore[attr-defined]
            break
    await ready(pilot)


def notices(app: MemtuiApp) -> list[str]:
    return [n.message for n in app._notifications]


def shown(widget: object) -> str:
    """The text a Static shows now."""
    return str(widget.render())  # type: ignore[attr-defined]


def status_text(app: MemtuiApp) -> str:
    return shown(app.query_one("#status"))


# -- item 1: the merge screen with an empty text -----------------------------------------------


async def test_clearing_the_merged_text_shows_the_problem_and_refuses_to_merge(
    fixture_copy: Callable[[str], Path],
) -> None:
    path = fixture_copy("items.jsonl")
    before = path.read_bytes()
    app = app_for(path)
    async with app.run_test(size=(130, 38)) as pilot:
        await ready(pilot)
        app.model.marked = {"1", "2"}
        await pilot.press("m")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, MergeScreen)
        editor = screen.query_one("#editor")
        editor.focus()
        await pilot.press("end", "shift+home", "backspace")  # the one line, selected, deleted
        await pilot.pause()
        assert editor.text == ""  # type: ignore[attr-defined]
        assert app.screen is screen
        assert "must not be empty" in shown(screen.query_one("#result-body"))
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
        assert app.return_code is None  # still running
    assert path.read_bytes() == before


# -- item 2: the clusters view after a merge ---------------------------------------------------


async def test_a_merged_cluster_leaves_the_list_and_cannot_be_merged_twice(
    fixture_copy: Callable[[str], Path],
) -> None:
    path = fixture_copy("realistic-store.json")
    app = app_for(path)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press("c")
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, ClustersScreen) and screen.result is not None
        first = list(screen.result.clusters[0])
        stale = [screen.by_id[i] for i in first]  # as the list showed them before the merge
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, MergeScreen)
        commits = app.commits_settled
        await pilot.press("ctrl+s", "y")
        await settled(pilot, commits)
        assert app.screen is screen
        assert all(set(first) - set(c) for c in screen.result.clusters)
        assert f"{len(screen.result.clusters)} clusters" in shown(screen.query_one("#threshold"))
        # the entries as the old list had them: refused, one line, no merge screen
        app.open_merge(stale)
        await pilot.pause()
        assert app.screen is screen
        assert any("already merged" in n and "\n" not in n for n in notices(app))
        assert app.return_code is None


# -- item 3: an exception that escapes a handler -----------------------------------------------


async def test_an_exception_in_a_key_handler_is_one_line_and_a_log(
    demo_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: MemtuiApp) -> None:
        raise RuntimeError("boom in help")

    monkeypatch.setattr(MemtuiApp, "action_help", broken)
    app = app_for(demo_copy)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        log = locations.data_dir() / "tui-errors.log"
        [line] = [n for n in notices(app) if "boom in help" in n]
        assert "\n" not in line and str(log) in line
        assert "Traceback" in log.read_text() and "boom in help" in log.read_text()
        await pilot.press("space")  # still running: keys still work
        assert len(app.model.marked) == 1
    assert app.return_code in (None, 0)


async def test_an_exception_in_a_message_handler_keeps_the_app_running(
    demo_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: HelpScreen) -> None:
        raise ValueError("boom on mount")

    monkeypatch.setattr(HelpScreen, "on_mount", broken, raising=False)
    app = app_for(demo_copy)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert any("boom on mount" in n for n in notices(app))
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("space")
        assert len(app.model.marked) == 1


async def test_an_exception_that_must_end_the_app_exits_non_zero(
    demo_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: HelpScreen) -> None:
        raise ValueError("boom in compose")

    monkeypatch.setattr(HelpScreen, "compose", broken)
    app = app_for(demo_copy)
    stderr = io.StringIO()
    app.error_console = Console(file=stderr, width=400)
    with pytest.raises(ValueError, match="boom in compose"):  # Pilot re-raises it for tests
        async with app.run_test(size=(120, 30)) as pilot:
            await ready(pilot)
            await pilot.press("question_mark")
            await pilot.pause()
    assert app.return_code == 1
    log = locations.data_dir() / "tui-errors.log"
    assert "boom in compose" in log.read_text()
    said = stderr.getvalue().strip()
    assert "boom in compose" in said and str(log) in said and "\n" not in said


@pytest.fixture
def demo_copy(tmp_path: Path) -> Path:
    from memtui.demo import make_demo_memories
    from memtui.stores import create_native_store

    path = tmp_path / "demo.json"
    create_native_store(path, make_demo_memories(120, 5, NOW), now=NOW, kind="demo", reason="t")
    return path


# -- items 3 and 13: marks ---------------------------------------------------------------------


def same_user_pair(app: MemtuiApp) -> list[str]:
    first = app.model.memory_at(0)
    assert first is not None
    rows = [app.model.memory_at(r) for r in range(len(app.model.view))]
    return [m.id for m in rows if m is not None and m.user_id == first.user_id][:2]


async def test_marks_end_with_the_merge_they_were_for(demo_copy: Path) -> None:
    app = app_for(demo_copy)
    async with app.run_test(size=(130, 38)) as pilot:
        await ready(pilot)
        app.model.marked = set(same_user_pair(app))
        await pilot.press("m")
        await pilot.pause()
        assert isinstance(app.screen, MergeScreen)
        commits = app.commits_settled
        await pilot.press("ctrl+s", "y")
        await settled(pilot, commits)
        assert not app.model.marked and "marked" not in status_text(app)
        await pilot.press("m")
        await pilot.pause()
        assert not any("already merged" in n for n in notices(app))


async def test_escape_clears_every_mark(demo_copy: Path) -> None:
    app = app_for(demo_copy)
    async with app.run_test(size=(130, 38)) as pilot:
        await ready(pilot)
        await pilot.press("space", "space", "space")
        assert "3 marked" in status_text(app)
        await pilot.press("escape")
        assert not app.model.marked and "marked" not in status_text(app)
        assert not table_row(app, 1).startswith("*")


async def test_marks_hidden_by_the_filter_are_counted_and_shown_before_merging(
    demo_copy: Path,
) -> None:
    app = app_for(demo_copy)
    async with app.run_test(size=(160, 38)) as pilot:
        await ready(pilot)
        one, two = same_user_pair(app)
        app.model.marked = {one}
        word = next(
            w for w in app.model.memories[app.model.index[two]].content.split() if len(w) > 5
        )
        await pilot.press("slash", *word, "enter")
        await pilot.pause()
        assert app.model.position_of(one) is None, "the filter should hide the first mark"
        app.query_one("#table").cursor = app.model.position_of(two)  # type: ignore[attr-defined]
        await pilot.press("space")
        assert "2 marked, 1 hidden by the filter" in status_text(app)
        await pilot.press("m")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, MergeScreen)
        title = shown(screen.query_one("#title"))
        assert "Merge 2 entries" in title and "1 hidden by the filter" in title


def table_row(app: MemtuiApp, screen_row: int) -> str:
    return app.query_one("#table").render_line(screen_row).text  # type: ignore[attr-defined]


# -- items 4 and 17: plan review and leaving with unsaved decisions ----------------------------


async def open_plan(pilot: Pilot) -> PlanScreen:
    await pilot.press("p")
    await ready(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, PlanScreen) and screen.plan is not None
    return screen


async def test_space_decides_in_the_plan_review(fixture_copy: Callable[[str], Path]) -> None:
    app = app_for(fixture_copy("items.jsonl"))
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        screen = await open_plan(pilot)
        tree = screen.query_one("#actions", Tree)
        assert tree.has_focus and tree.cursor_line == 0
        await pilot.press("down")  # the first Down moves, it is not swallowed
        assert tree.cursor_line == 1
        while tree.cursor_node is not None and not (tree.cursor_node.data or "").startswith("a"):
            await pilot.press("down")
        node = tree.cursor_node
        assert node is not None and node.data is not None
        was = node.data in screen.approved
        kind = node.parent
        assert kind is not None and kind.is_expanded
        await pilot.press("space")
        assert (node.data in screen.approved) != was
        assert kind.is_expanded


@pytest.mark.parametrize("key", ["q", "escape"])
async def test_leaving_the_plan_review_with_decisions_asks_first(
    key: str, fixture_copy: Callable[[str], Path]
) -> None:
    app = app_for(fixture_copy("items.jsonl"))
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        screen = await open_plan(pilot)
        await pilot.press("down", "R")  # reject a whole kind
        await pilot.press(key)
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await pilot.pause()
        assert app.screen is screen and app.return_code is None
        await pilot.press(key)
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        if key == "q":
            assert app.return_code == 0  # quitting
        else:
            assert app.screen is not screen


async def test_leaving_the_plan_review_without_decisions_does_not_ask(
    fixture_copy: Callable[[str], Path],
) -> None:
    app = app_for(fixture_copy("items.jsonl"))
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        screen = await open_plan(pilot)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is not screen and not isinstance(app.screen, ConfirmScreen)


async def test_leaving_the_merge_editor_with_own_words_asks_first(
    fixture_copy: Callable[[str], Path],
) -> None:
    app = app_for(fixture_copy("items.jsonl"))
    async with app.run_test(size=(130, 38)) as pilot:
        await ready(pilot)
        app.model.marked = {"1", "2"}
        await pilot.press("m")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, MergeScreen)
        screen.query_one("#editor").focus()
        await pilot.press("end", "!")
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await pilot.pause()
        assert app.screen is screen


# -- item 5: a store that failed to open -------------------------------------------------------


async def test_a_store_that_failed_to_open_keeps_its_message_and_q_quits_non_zero(
    tmp_path: Path,
) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"version": 1, "memories": [')
    app = app_for(path)
    async with app.run_test(size=(100, 24)) as pilot:
        await ready(pilot)
        assert not isinstance(app.focused, Input)
        await pilot.press("slash", "x")
        message = app.query_one("#message")
        assert message.display and "could not open" in shown(message)
        assert "filter" not in status_text(app)
        await pilot.press("q")
        await pilot.pause()
        assert app.return_code == 1


# -- item 7: keys typed right after the key that opens an input --------------------------------


def type_at_once(app: MemtuiApp, keys: list[tuple[str, str]]) -> None:
    """Keys arriving together, as from a fast typist on a busy machine: all queued before
    the app handles the first."""
    for key, char in keys:
        event = events.Key(key, char)
        event.set_sender(app)
        app._driver.send_message(event)  # type: ignore[union-attr]


async def test_keys_typed_right_after_slash_go_to_the_filter(demo_copy: Path) -> None:
    app = app_for(demo_copy)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        type_at_once(app, [("slash", "/"), ("c", "c"), ("o", "o"), ("d", "d")])
        await ready(pilot)
        assert isinstance(app.screen, HomeScreen)  # `c` did not open the clusters view
        assert app.query_one("#filter", Input).value == "cod"
        assert app.model.query == "cod" and app.model.sort_key == "age"


# -- item 6: restoring from the lineage view ---------------------------------------------------


async def test_restore_from_lineage_says_what_happened_and_cuts_the_links(
    demo_copy: Path,
) -> None:
    store = open_store(demo_copy)
    # an entry whose successor is itself superseded (a chain of three)
    entry = next(
        m
        for m in store.memories()
        if m.status is Status.SUPERSEDED
        and m.superseded_by
        and store.get(m.superseded_by).status is Status.SUPERSEDED
    )
    successor = entry.superseded_by
    assert "supersede_reason" in entry.extra and entry.id in store.get(successor).supersedes
    app = app_for(demo_copy)
    async with app.run_test(size=(140, 34)) as pilot:
        await ready(pilot)
        await pilot.press("full_stop")
        app.query_one("#table").cursor = app.model.position_of(entry.id)  # type: ignore[attr-defined]
        await pilot.press("l")
        await ready(pilot)
        assert isinstance(app.screen, LineageScreen)
        tree = app.screen.query_one(Tree)
        tree.move_cursor(tree.root)
        commits = app.commits_settled
        await pilot.press("r", "y")
        await settled(pilot, commits)
        [done] = [n for n in notices(app) if n.startswith("Restored")]
        assert "gone" not in done and f"{successor} no longer supersedes it" in done
    after = open_store(demo_copy)
    assert after.get(entry.id).status is Status.ACTIVE
    assert "supersede_reason" not in after.get(entry.id).extra
    assert entry.id not in after.get(successor).supersedes


async def test_a_link_without_a_reason_reads_as_a_sentence(tmp_path: Path) -> None:
    from memtui.model import Memory
    from memtui.stores import create_native_store

    path = tmp_path / "two.json"
    old = Memory(
        id="old",
        content="likes tea",
        status=Status.SUPERSEDED,
        superseded_by="new",
        superseded_at=NOW,
    )
    new = Memory(id="new", content="likes coffee", supersedes=("old",))
    create_native_store(path, [old, new], now=NOW, kind="create", reason="t")
    app = app_for(path)
    async with app.run_test(size=(140, 34)) as pilot:
        await ready(pilot)
        app.query_one("#table").cursor = app.model.position_of("new")  # type: ignore[attr-defined]
        await pilot.press("l")
        await ready(pilot)
        tree = app.screen.query_one(Tree)
        labels = [str(n.label) for n in tree.root.children[1].children[0].children]
        assert labels and not labels[0].rstrip().endswith(":")
        assert "source data" in labels[0] and "superseded" in labels[0]


# -- item 8: sorting ---------------------------------------------------------------------------


@pytest.mark.parametrize("size", [(80, 24), (160, 45)])
async def test_a_sort_shows_the_first_rows_and_the_whole_header(
    size: tuple[int, int], demo_copy: Path
) -> None:
    app = app_for(demo_copy)
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        table = app.query_one("#table")
        await pilot.press("pagedown", "pagedown")
        assert table.scroll_y > 0  # type: ignore[attr-defined]
        await pilot.press("o")
        await pilot.pause()
        assert table.cursor == 0 and table.scroll_y == 0  # type: ignore[attr-defined]
        for key in ("importance", "source", "content", "category", "user"):
            if any(c.key == key for c, _ in table._columns):  # type: ignore[attr-defined]
                table.sort_by(key)  # type: ignore[attr-defined]
                await pilot.pause()
                header = table_row(app, 0)
                arrow = "↓" if app.model.descending else "↑"
                assert f"{key}{arrow}" in header, header


# -- item 9: ctrl+s with nothing prepared; the config file on first launch ---------------------


async def test_ctrl_s_with_nothing_prepared_says_so(demo_copy: Path) -> None:
    app = app_for(demo_copy)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert any("Nothing is prepared" in n for n in notices(app))


async def test_the_first_launch_writes_no_config(demo_copy: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    app = app_for(demo_copy, config_path=config)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        await pilot.pause(0.2)
    assert not config.exists()


# -- item 16: the command palette and the model box --------------------------------------------


async def palette_hits(app: MemtuiApp, query: str) -> list[str]:
    from memtui.tui.commands import MemtuiCommands

    provider = MemtuiCommands(app.screen)
    return [str(hit.text or hit.prompt) async for hit in provider.search(query)]


async def test_the_palette_finds_commands_by_their_description(demo_copy: Path) -> None:
    app = app_for(demo_copy)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        assert "Theme" in await palette_hits(app, "Change the current theme")
        assert any("clusters" in h for h in await palette_hits(app, "threshold you move"))


async def test_the_disabled_model_box_says_why(demo_copy: Path) -> None:
    app = app_for(demo_copy)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        screen = await open_plan(pilot)
        box = screen.query_one("#use-llm")
        assert box.disabled
        assert "[llm] url and model" in shown(screen.query_one("#llm-why"))
        assert box.region.right <= 80


# -- items 10 and 11: layout at 80×24 and 160×45 -----------------------------------------------


def footer_text(app: MemtuiApp) -> str:
    """The footer as the terminal shows it."""
    footer = app.screen.query_one("Footer")
    region = footer.region
    strips = app.screen._compositor.render_strips()  # type: ignore[attr-defined]
    return "".join(s.text for s in strips[region.y : region.y + region.height])


@pytest.mark.parametrize("size", [(80, 24), (160, 45)])
async def test_the_essential_keys_show_in_the_footer(
    size: tuple[int, int], demo_copy: Path
) -> None:
    app = app_for(demo_copy)
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        text = footer_text(app)
        for word in (
            "Filter",
            "Mark",
            "Merge",
            "Plan",
            "Clusters",
            "Decay",
            "History",
            "Quit",
            "Help",
        ):
            assert word in text, text


@pytest.mark.parametrize("size", [(80, 24), (160, 45)])
async def test_the_help_screen_says_what_each_key_does(
    size: tuple[int, int], demo_copy: Path
) -> None:
    app = app_for(demo_copy)
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        strips = app.screen._compositor.render_strips()  # type: ignore[attr-defined]
        screen_text = "\n".join(s.text for s in strips)
        assert "Filter as you type" in screen_text
        assert "Review a consolidation plan" in screen_text


async def test_the_status_filter_shows_its_value(demo_copy: Path) -> None:
    app = app_for(demo_copy)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("f")
        await pilot.pause()
        select = app.screen.query_one("#status")
        assert select.region.height >= 3
        strips = app.screen._compositor.render_strips()  # type: ignore[attr-defined]
        assert any("shown by default" in s.text for s in strips)


async def test_the_status_bar_fits_with_a_long_path(tmp_path: Path) -> None:
    from memtui.demo import make_demo_memories
    from memtui.stores import create_native_store

    folder = tmp_path / ("a-rather-long-folder-name-" * 3)
    folder.mkdir()
    path = folder / "demo.json"
    create_native_store(path, make_demo_memories(60, 5, NOW), now=NOW, kind="demo", reason="t")
    app = app_for(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("full_stop")
        await pilot.pause()
        line = status_text(app)
        assert len(line) <= 78 and "+hidden" in line and "60 entries" in line


# -- the monkey: random keys on every screen ---------------------------------------------------

QUITTING = {"q", "ctrl+q", "ctrl+c", "ctrl+p"}  # the palette can run Quit too


def every_key() -> list[str]:
    from memtui.tui.modals import FilterScreen, ReasonConfirmScreen
    from memtui.tui.screens.clusters import ClustersScreen
    from memtui.tui.screens.decay import DecayScreen
    from memtui.tui.screens.entry_form import EntryFormScreen
    from memtui.tui.screens.history import HistoryScreen
    from memtui.tui.screens.plan import PathScreen
    from memtui.tui.widgets.memory_table import MemoryTable

    classes = (
        MemtuiApp,
        HomeScreen,
        MemoryTable,
        LineageScreen,
        MergeScreen,
        PlanScreen,
        PathScreen,
        ClustersScreen,
        DecayScreen,
        HistoryScreen,
        EntryFormScreen,
        ConfirmScreen,
        ReasonConfirmScreen,
        HelpScreen,
        FilterScreen,
    )
    keys = {
        key.strip()
        for cls in classes
        for binding in cls.BINDINGS
        for key in binding.key.split(",")  # type: ignore[union-attr]
    }
    keys |= {"enter", "tab", "shift+tab", "up", "down", "escape", "backspace", "y", "n"}
    keys |= set("abc xyz")
    return sorted(keys - QUITTING)


def agrees_with_its_ledger(path: Path) -> None:
    """Every entry a transaction touched is what the ledger says that transaction left (in the
    store's own record where the format has one), and every entry it removed is gone."""
    store = open_store(path)
    history = History.of(store)
    raws = store.document().raws
    for ident, images in history.images.items():
        image = images[-1][1]
        current = store.find(ident)
        kept = image.after is not None and (
            store.format_name != "pi" or image.after["status"] == "active"
        )
        assert (current is not None) == kept, ident
        if current is None:
            continue
        if image.after_raw is not None:
            assert raws[ident] == image.after_raw, ident
        else:
            assert current == Memory.from_dict(image.after), ident  # type: ignore[arg-type]


# runs of keys that end in a commit, mixed in now and then so that the keys make commits to
# undo (from whatever screen is on top when they start)
COMMITTING = (
    ("x", "y"),
    ("a", "y"),
    ("u", "y"),
    ("e", "end", *" ok", "ctrl+s", "y"),
    ("n", *"a new note", "ctrl+s", "r", *"why", "enter"),
    ("space", "down", "space", "m", "ctrl+s", "y"),
)

# the store, and how many keys in the suite: most on the demo (every screen has something to
# show there); the other formats' stores differ in what a commit writes, which fewer keys reach.
# MEMTUI_WALK_KEYS=N types N keys on every store (1000 or more finds more), MEMTUI_WALK_SEED=S
# sets the seed (each store has its own by default)
MONKEY_STORES = {
    "demo": (None, 300),
    "pi": ("realistic-store.json", 120),
    "longterm": ("items.jsonl", 120),
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", MONKEY_STORES)
async def test_random_keys_break_nothing(
    kind: str,
    demo_copy: Path,
    fixture_copy: Callable[[str], Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seeded random keys from every screen's bindings plus text, typed fast (a pause every
    few keys, as a quick typist would), with runs that end in a commit: nothing escapes, the
    store loads and agrees with its ledger, and undoing every commit the keys made (newest
    first) gives back the entries it started with (a pi store byte for byte).

    The suite types 300 keys on the demo and 120 on the others; `MEMTUI_WALK_KEYS=1000 python
    -m pytest tests/test_tui_walkthrough.py -k random_keys` types a thousand on each, and
    `MEMTUI_WALK_SEED=S` repeats a run with seed S (a failure names its seed)."""
    fixture, count = MONKEY_STORES[kind]
    count = int(os.environ.get("MEMTUI_WALK_KEYS", count))
    seed = os.environ.get("MEMTUI_WALK_SEED", f"walk {kind}")
    try:
        await _random_keys(kind, fixture, count, seed, demo_copy, fixture_copy, monkeypatch)
    except BaseException as e:
        e.add_note(f"MEMTUI_WALK_SEED={seed!r} MEMTUI_WALK_KEYS={count} repeats this run")
        raise


async def _random_keys(
    kind: str,
    fixture: str | None,
    count: int,
    seed: str,
    demo_copy: Path,
    fixture_copy: Callable[[str], Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import random

    import textual.app

    path = demo_copy if fixture is None else fixture_copy(fixture)
    monkeypatch.chdir(path.parent)  # a plan saved by chance lands here

    async def next_tick(*args: object) -> None:
        await asyncio.sleep(0)

    # the pilot waits for the machine to idle after every key: here only every few keys
    monkeypatch.setattr(textual.app, "wait_for_idle", next_tick)
    keys = every_key()
    rng = random.Random(seed)
    before = {m.id: m.with_(version=None) for m in open_store(path).memories()}
    start_bytes = path.read_bytes()
    app = app_for(path)
    async with app.run_test(size=(120, 34)) as pilot:
        await ready(pilot)
        for n in range(count):
            if rng.random() < 0.06:  # about one key in sixteen starts a committing run
                await pilot.press(*rng.choice(COMMITTING))
                await pilot.pause()
            else:
                await pilot.press(rng.choice(keys))
            if n % 8 == 7:
                await pilot.pause()
        await ready(pilot)
        assert app.errors_reported == 0, notices(app)
        assert app.return_code is None
    assert not (locations.data_dir() / "tui-errors.log").exists()
    agrees_with_its_ledger(path)
    store = open_store(path)
    made = [t for t in store.history() if t.kind != "demo"]
    assert made, "the keys made no commit: the test would prove nothing about undo"
    for tx in made:
        if tx.id not in store.undone() and tx.undoes is None:
            store.undo(tx.id, now=NOW)
    agrees_with_its_ledger(path)
    after = {m.id: m.with_(version=None) for m in open_store(path).memories()}
    assert after == before
    if kind == "pi":
        # every entry as pi wrote it, and pi's own keys, but for the "last written" stamp (undo
        # puts it back only while no write came after the one undone) and the entries' order
        # (undos made out of order put entries back where each was, not in the first order)
        def as_written(data: bytes) -> tuple[dict[str, object], dict[str, object]]:
            value = json.loads(data)
            entries = {e["id"]: e for e in value.pop("memories")}
            value.pop("updatedAt", None)
            return entries, value

        assert as_written(path.read_bytes()) == as_written(start_bytes)


# -- issue 9: popped screens are collected ------------------------------------------------------


async def test_plan_reviews_that_were_closed_are_collected(
    fixture_copy: Callable[[str], Path],
) -> None:
    import gc
    import weakref

    app = app_for(fixture_copy("realistic-store.json"))
    screens = []
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        for _ in range(3):
            screens.append(weakref.ref(await open_plan(pilot)))
            app.pop_screen()  # leaves without asking: nothing was decided
            await ready(pilot)
        await pilot.pause()
        gc.collect()
        alive = [s for s in screens[:-1] if s() is not None]
        # (the newest may still be named by its finished planning worker; none may pile up)
        assert not alive, f"{len(alive)} closed plan reviews are still alive"
