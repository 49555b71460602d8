"""The keyboard model (issue 22): a text box types, a question takes only a deliberate answer,
each screen opens on what you act on, lists move alike; and the states shown are true (the
history after an outside edit, the banner, the stale form, the history refresh)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList, TextArea, Tree

from memtui.stores import open_store
from memtui.tui import make_app
from memtui.tui.app import MemtuiApp
from memtui.tui.modals import ConfirmScreen, Question, ReasonConfirmScreen
from memtui.tui.screens.clusters import ClustersScreen
from memtui.tui.screens.decay import DecayScreen
from memtui.tui.screens.entry_form import EntryFormScreen
from memtui.tui.screens.history import HistoryScreen
from memtui.tui.screens.merge import MergeScreen
from memtui.tui.widgets.lineage import LineageScreen
from tests.conftest import NOW

os.environ["TEXTUAL_ANIMATIONS"] = "none"

CliRun = Callable[..., object]


def app_for(path: Path | str, **kw: object) -> MemtuiApp:
    return make_app(str(path), now=NOW, watch_interval=0, **kw)  # type: ignore[arg-type]


async def ready(pilot: Pilot) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def settled(pilot: Pilot, before: int) -> None:
    """Wait until the commit started after `before` has ended (done or refused)."""
    for _ in range(500):
        await pilot.pause(0.01)
        if pilot.app.commits_settled > before:  # type: ignore[attr-defined]
            break
    await ready(pilot)


async def answer(app: MemtuiApp, pilot: Pilot, *keys: str) -> None:
    before = app.commits_settled
    await pilot.press(*keys)
    await settled(pilot, before)


def transactions(path: Path) -> int:
    return len(open_store(path).history())


def notices(app: MemtuiApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


def status_text(app: MemtuiApp) -> str:
    return str(app.query_one("#status").render())


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRun) -> Path:
    """`memtui demo` with one CLI edit after it (the issue's setting)."""
    monkeypatch.chdir(tmp_path)
    cli("demo", "--out", "demo.json", "--no-tui")
    path = Path("demo.json")
    first = open_store(path).memories()[0]
    cli("edit", path, first.id, "--importance", "0.5")
    return path


# -- item 1: letters beside a text box ---------------------------------------------------------


async def test_typing_buy_on_the_merge_screen_types_it_and_never_undoes(demo: Path) -> None:
    before = transactions(demo)
    app = app_for(demo)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await pilot.press("slash", *"board games", "enter", "home", "space", "space", "m")
        await ready(pilot)
        assert isinstance(app.screen, MergeScreen)
        editor = app.screen.query_one("#editor", TextArea)
        assert app.focused is editor  # the text box, without a tab
        await pilot.press(*"buy")
        await ready(pilot)
        assert isinstance(app.screen, MergeScreen)  # no Undo? question
        assert "buy" in editor.text
        assert not any("Undo" in n for n in notices(app))
    assert transactions(demo) == before


async def test_u_is_the_tables_undo_only(demo: Path) -> None:
    """On a screen that does not say `u` in its footer, `u` does nothing."""
    before = transactions(demo)
    app = app_for(demo)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await pilot.press("d")
        await ready(pilot)
        assert isinstance(app.screen, DecayScreen)
        await pilot.press("u", "y")
        await ready(pilot)
        assert isinstance(app.screen, DecayScreen)
    assert transactions(demo) == before


async def test_a_question_opened_while_typing_ignores_the_next_keys(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rest of a word typed right after a question opened never answers it: keys that come
    before it has been quiet for `settle` seconds are dropped and restart the wait."""
    monkeypatch.setattr(Question, "settle", 30.0)  # longer than this test: never armed
    before = transactions(demo)
    app = app_for(demo)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await pilot.press("u", "y", "enter")  # undo's question, then "y" and enter at once
        await ready(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert not app.screen.armed
        await pilot.press("escape")  # escape is always No
        await ready(pilot)
        assert not isinstance(app.screen, ConfirmScreen)
    assert transactions(demo) == before


async def test_a_question_answers_once_it_has_been_quiet(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Question, "settle", 0.05)
    before = transactions(demo)
    app = app_for(demo)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await pilot.press("u")
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, ConfirmScreen)
        for _ in range(500):  # wait for the question to arm (no key meanwhile)
            if screen.armed:
                break
            await pilot.pause(0.01)
        assert screen.armed
        await answer(app, pilot, "y")
    assert transactions(demo) == before + 1


async def test_keys_typed_together_and_handled_late_never_answer(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a busy machine the keys of "buy" can reach the question after it armed: they were
    read a few milliseconds apart, so they still count as typing, and do not answer it."""
    from textual import events

    monkeypatch.setattr(Question, "settle", 0.05)
    before = transactions(demo)
    app = app_for(demo)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await pilot.press("u")
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, ConfirmScreen)
        for _ in range(500):
            if screen.armed:
                break
            await pilot.pause(0.01)
        assert screen.armed
        late = events.Key("y", "y")
        late.time = app._last_key_time + 0.01  # read right after the "u", handled now
        app.post_message(late)
        await ready(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.pause(0.1)
        await answer(app, pilot, "y")  # a "y" after a pause answers
    assert transactions(demo) == before + 1


async def test_n_in_a_question_is_no_and_never_the_new_entry_form(demo: Path) -> None:
    before = transactions(demo)
    app = app_for(demo)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await pilot.press("x")  # delete asks (a question with an optional reason)
        await ready(pilot)
        assert isinstance(app.screen, ReasonConfirmScreen)
        await pilot.press("n")
        await ready(pilot)
        assert not isinstance(app.screen, (ReasonConfirmScreen, EntryFormScreen))
        await pilot.press("u")
        await ready(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await ready(pilot)
        assert not isinstance(app.screen, (ConfirmScreen, EntryFormScreen))
    assert transactions(demo) == before


async def test_the_reason_box_types_y_and_n_and_enter_goes_to_yes_first(demo: Path) -> None:
    before = transactions(demo)
    app = app_for(demo)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await pilot.press("a", "r", *"yes no")
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, ReasonConfirmScreen)
        assert screen.query_one("#reason", Input).value == "yes no"
        await pilot.press("enter")  # the reason ends: focus on Yes, nothing written
        await ready(pilot)
        assert app.screen is screen
        assert app.focused is screen.query_one("#yes")
        assert transactions(demo) == before
        await answer(app, pilot, "enter")
    history = open_store(demo).history()
    assert len(history) == before + 1
    assert history[0].reason.endswith("yes no") or "yes no" in history[0].reason


# -- item 8: where focus lands, and the movement keys ------------------------------------------


async def test_each_screen_opens_on_what_you_act_on(demo: Path) -> None:
    app = app_for(demo)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        for key, screen_type, widget_id in (
            ("c", ClustersScreen, "list"),
            ("d", DecayScreen, "going-list"),
            ("h", HistoryScreen, "list"),
            ("e", EntryFormScreen, "content"),
        ):
            await pilot.press(key)
            await ready(pilot)
            assert isinstance(app.screen, screen_type)
            assert app.focused is not None and app.focused.id == widget_id, (key, app.focused)
            await pilot.press("escape")
            await ready(pilot)


async def test_j_and_k_move_in_the_history_list_and_the_lineage_tree(demo: Path) -> None:
    app = app_for(demo)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await pilot.press("h")
        await ready(pilot)
        options = app.screen.query_one("#list", OptionList)
        assert options.highlighted == 0
        await pilot.press("j")
        assert options.highlighted == 1
        await pilot.press("k")
        assert options.highlighted == 0
        await pilot.press("end")
        assert options.highlighted == options.option_count - 1
        await pilot.press("escape")
        await ready(pilot)
        await pilot.press("l")
        await ready(pilot)
        assert isinstance(app.screen, LineageScreen)
        tree = app.screen.query_one(Tree)
        assert app.focused is tree
        line = tree.cursor_line
        await pilot.press("j")
        assert tree.cursor_line == line + 1
        await pilot.press("k")
        assert tree.cursor_line == line
        await pilot.press("end")
        assert tree.cursor_line == tree.last_line


# -- item 2: the history after an outside edit -------------------------------------------------


async def test_history_of_an_entry_changed_outside_shows_the_recorded_change(
    demo: Path,
) -> None:
    app = app_for(demo)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await pilot.press("n", *"the cat sleeps in the sun", "ctrl+s")
        await ready(pilot)
        await answer(app, pilot, "y")
        added = open_store(demo).history()[0].changes[0].id
        assert app.query_one("#table").current.id == added  # type: ignore[attr-defined]
        await pilot.press("e", "tab", "home", "ctrl+k", *"0.9", "ctrl+s")
        await ready(pilot)
        await answer(app, pilot, "y")
        data = json.loads(demo.read_text())
        for record in data["memories"].values():
            if record["id"] == added:
                record["content"] = "the cat sleeps in the shade"
        demo.write_text(json.dumps(data))
        await pilot.press("ctrl+r")
        await ready(pilot)
        await pilot.press("h")
        await ready(pilot)
        assert isinstance(app.screen, HistoryScreen)
        options = app.screen.query_one("#list", OptionList)
        shown = []
        for _ in range(options.option_count):
            await pilot.pause()
            shown.append(str(app.screen.query_one("#detail-body").render()))
            await pilot.press("down")
        assert app.errors_reported == 0
        touched = [text for text in shown if added in text]
        assert touched and all(text.strip() for text in shown)
        assert any("changed outside memtui since" in text for text in touched)
        assert any("importance" in text and "0.9" in text for text in touched)


# -- items 3, 4, 5: stale state and refusals ----------------------------------------------------


def history_title(app: MemtuiApp) -> str:
    return str(app.screen.query_one("#title").render())


async def test_an_edit_form_whose_entry_changed_says_so_and_asks_again(
    demo: Path, cli: CliRun
) -> None:
    app = app_for(demo)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        entry = app.query_one("#table").current  # type: ignore[attr-defined]
        await pilot.press("e", "tab", "home", "ctrl+k", *"0.9", "ctrl+s")
        await ready(pilot)
        cli("edit", demo, entry.id, "--importance", "0.55")
        await answer(app, pilot, "y")  # refused: the entry changed
        assert isinstance(app.screen, EntryFormScreen)
        assert open_store(demo).get(entry.id).importance == 0.55
        app.check_outside()
        await ready(pilot)
        assert app.outside_change
        await pilot.press("ctrl+r")
        await ready(pilot)
        assert not app.outside_change  # the banner clears on reload
        said = str(app.screen.query_one("#problem").render())
        assert "Changed outside memtui" in said and "0.55" in said
        await pilot.press("ctrl+s")
        await ready(pilot)
        asked = str(app.screen.query_one("#body").query_one("Static").render())
        assert "was  0.55" in asked and "now  0.9" in asked
        await answer(app, pilot, "y")
    assert open_store(demo).get(entry.id).importance == 0.9


async def test_the_banner_is_the_fingerprints_and_a_save_clears_it(demo: Path, cli: CliRun) -> None:
    app = app_for(demo)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        app.check_outside()
        await ready(pilot)
        assert "changed on disk" not in status_text(app)
        other = open_store(demo).memories()[-1]
        cli("edit", demo, other.id, "--importance", "0.42")
        app.check_outside()
        await ready(pilot)
        assert "changed on disk" in status_text(app)
        await pilot.press("a")  # archive the highlighted one: saved over the outside change
        await ready(pilot)
        await answer(app, pilot, "y")
        assert "changed on disk" not in status_text(app)


async def test_history_refreshes_after_undo_and_a_blocked_undo_offers_the_later_ones(
    demo: Path, cli: CliRun
) -> None:
    entry = open_store(demo).memories()[3]
    cli("edit", demo, entry.id, "--importance", "0.31")
    cli("edit", demo, entry.id, "--importance", "0.32")
    cli("edit", demo, entry.id, "--importance", "0.33")
    first_of_three = open_store(demo).history()[2].id
    count = transactions(demo)
    app = app_for(demo)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await pilot.press("h")
        await ready(pilot)
        assert f"{count} transactions" in history_title(app)
        await pilot.press("j", "j")  # the first of the three edits
        await pilot.press("u")
        await ready(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        asked = " ".join(str(w.render()) for w in app.screen.query("Static"))
        ids = f"#{first_of_three + 2}, #{first_of_three + 1} and #{first_of_three}"
        assert f"#{first_of_three} cannot be undone alone" in asked and ids in asked
        await answer(app, pilot, "y")
        assert isinstance(app.screen, HistoryScreen)
        assert f"{count + 1} transactions" in history_title(app)
    assert open_store(demo).get(entry.id).importance == entry.importance


def test_the_cli_names_the_later_transactions_and_undoes_them_together(
    demo: Path, cli: CliRun
) -> None:
    entry = open_store(demo).memories()[3]
    for value in ("0.31", "0.32", "0.33"):
        cli("edit", demo, entry.id, "--importance", value)
    first = open_store(demo).history()[2].id
    refused = cli("undo", demo, first)
    assert refused.code != 0  # type: ignore[attr-defined]
    line = refused.err.strip()  # type: ignore[attr-defined]
    assert f"#{first + 2} and #{first + 1}" in line and "--with-later" in line
    assert "reload" not in line
    done = cli("undo", demo, first, "--with-later")
    assert done.code == 0, done.err  # type: ignore[attr-defined]
    assert open_store(demo).get(entry.id).importance == entry.importance
    together = open_store(demo).history()[0].id
    undone = open_store(demo).undone()
    assert {first, first + 1, first + 2} <= set(undone)  # each says it is undone
    again = cli("undo", demo, first + 2)
    assert again.code != 0 and "already undone" in again.err  # type: ignore[attr-defined]
    assert cli("undo", demo, together).code == 0  # the together-undo is undone as one
    assert open_store(demo).get(entry.id).importance == 0.33
    assert not {first, first + 1, first + 2} & set(open_store(demo).undone())


async def test_an_empty_filter_says_why_and_clearing_it_keeps_the_row_in_view(
    demo: Path,
) -> None:
    app = app_for(demo)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        table = app.query_one("#table")
        await pilot.press("slash", *"zzqqxx")
        await ready(pilot)
        hint = table.render_line(2).text  # type: ignore[attr-defined]
        assert "No entry matches the filter 'zzqqxx'" in hint and "escape clears" in hint
        await pilot.press("escape")
        await ready(pilot)
        deep = app.model.memories[app.model.view[-5]]
        await pilot.press("slash", *deep.id, "enter")
        await ready(pilot)
        assert table.current.id == deep.id  # type: ignore[attr-defined]
        await pilot.press("escape")
        await ready(pilot)
        assert not app.model.query
        cursor = table.cursor  # type: ignore[attr-defined]
        assert table.current.id == deep.id and cursor > 40  # type: ignore[attr-defined]
        top = round(table.scroll_y)
        assert top <= cursor < top + table.size.height - 1
        row = table.render_line(cursor - top + 1)  # type: ignore[attr-defined]
        assert deep.id[:8] in row.text or any(
            seg.style is not None and seg.style.bgcolor is not None for seg in row
        )


# -- item 7: the keymap, checked at start -------------------------------------------------------

BAD_KEYMAPS = [
    ('"table.markk" = "x"', "'table.markk': no such binding id"),
    ('"table.mark" = "notakey!!"', "'table.mark': 'notakey!!' is not a key"),
    ('"store.plan" = "q"', "'q' is bound to both 'app.quit' and 'store.plan' on HomeScreen"),
    ('"table.mark" = "space,x"', "'x' is bound to both 'table.mark' and 'entry.delete'"),
]


@pytest.mark.parametrize(("line", "said"), BAD_KEYMAPS)
def test_a_bad_keymap_stops_the_cli_with_one_line_naming_the_config_line(
    demo: Path, tmp_path: Path, cli: CliRun, line: str, said: str
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[ui]\ntheme = "memtui-dark"\n\n[keymap]\n{line}\n')
    before = demo.read_bytes()
    result = cli("--config", config, demo)
    assert result.code == 2  # type: ignore[attr-defined]
    err = result.err.strip()  # type: ignore[attr-defined]
    assert err.count("\n") == 0 and f"{config}:5: [keymap]" in err and said in err, err
    assert demo.read_bytes() == before


async def test_a_bad_keymap_is_a_failed_start_in_the_tui(demo: Path, tmp_path: Path) -> None:
    from memtui.config import load_settings

    config = tmp_path / "config.toml"
    config.write_text('[keymap]\n"entry.lineage" = "ctrl+l"\n"table.markk" = "x"\n')
    app = app_for(demo, settings=load_settings(config))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        shown = str(app.query_one("#message").render())
        assert "memtui did not start" in shown
        assert f"{config}:3: [keymap] 'table.markk': no such binding id" in shown
        assert app.store is None  # nothing was read
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 2


def test_the_readmes_keymap_examples_are_accepted() -> None:
    from memtui.config import Settings
    from memtui.tui import check_keymap

    readme = (Path(__file__).parent.parent / "README.md").read_text()
    blocks = readme.split("[keymap]\n")[1:]
    assert blocks
    for block in blocks:
        lines = [x for x in block.split("\n\n")[0].split("```")[0].splitlines() if "=" in x]
        keymap = dict(
            (part.strip().strip('"') for part in x.split("#")[0].split("=", 1)) for x in lines
        )
        assert keymap and check_keymap(Settings(keymap=keymap)) == [], keymap


async def test_editing_the_merged_text_leaves_one_strategy_chosen(demo: Path) -> None:
    app = app_for(demo)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await pilot.press("slash", *"board games", "enter", "home", "space", "space", "m")
        await ready(pilot)
        await pilot.press(*" and more")
        await ready(pilot)
        chosen = [b.id for b in app.screen.query("RadioButton") if b.value]  # type: ignore[attr-defined]
        assert chosen == ["s-own"]


async def test_a_long_question_keeps_its_buttons_on_an_80x24_screen(demo: Path) -> None:
    from rich.text import Text

    app = app_for(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        for screen in (
            ConfirmScreen("Long?", Text("\n".join(f"line {n}" for n in range(60)))),
            ReasonConfirmScreen("Long?", Text("\n".join(f"line {n}" for n in range(60)))),
        ):
            app.push_screen(screen)
            await ready(pilot)
            yes = screen.query_one("#yes").region
            assert yes.height > 0 and yes.bottom <= 24, yes
            await pilot.press("escape")
            await ready(pilot)


def test_the_status_line_keeps_a_database_url_whole_and_says_where() -> None:
    from memtui.tui.widgets.status_line import status_text
    from memtui.tui.widgets.table_model import TableModel

    text = status_text(
        TableModel([], NOW),
        None,
        "postgresql://postgres@db.internal/memory",
        1,
        outside_change=True,
        failed=False,
        theme="memtui-dark",
        where="in the database",
        read_only="the file is read-only",
    ).plain
    assert "postgresql://postgres@db.internal/memory" in text
    assert "changed in the database" in text and "read-only" in text
    assert "sort age↑" in text  # newest first: the ages shown ascend


async def test_the_merge_pane_says_what_pi_does_with_the_members(
    fixture_copy: Callable[[str], Path],
) -> None:
    path = fixture_copy("example-store.json")
    app = app_for(path)
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot)
        await pilot.press("home", "space", "space", "m")
        await ready(pilot)
        assert isinstance(app.screen, MergeScreen)
        title = str(app.screen.query_one("#title").render())
        pane = str(app.screen.query_one("#result-body").render())
        assert "of user" not in title  # pi has no users
        assert "leave the store's file" in pane and "stay in the store as merged" not in pane
