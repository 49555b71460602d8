"""The config file: one typed model, checked once, one-line errors; comment-keeping atomic
writes; one resolution order (`--config` > `$MEMTUI_CONFIG` > default) and one profile
resolution for every command and the TUI's screens."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from memtui.config import Settings, load_settings, load_user_settings, resolve_profile, save_setting
from memtui.engine.profiles import get_profile
from memtui.errors import MemtuiError
from memtui.tui import make_app
from memtui.tui.screens.clusters import ClustersScreen
from memtui.tui.screens.decay import DecayScreen
from memtui.tui.screens.plan import PlanScreen
from tests.conftest import NOW, CliResult

os.environ["TEXTUAL_ANIMATIONS"] = "none"

OVERRIDES = "# lower merge line for pi stores\n[profiles.pi]\nmerge_threshold = 0.5\n"


async def ready(pilot: Pilot) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


# -- writing: the theme switch ----------------------------------------------------------------

LAYOUTS = {
    "commented header": (
        '# my settings\n[ui]  # look\ntheme = "memtui-dark"  # my favourite\n\n'
        "[store]\nbackups = 5 # five\n# the end\n"
    ),
    "dotted key": (
        '# my settings\nui.theme = "memtui-dark"   # dotted\nstore.backups = 5\n\n'
        '[keymap]\n# marks\n"table.mark" = "space,x"\n'
    ),
    "inline table": 'ui = { theme = "memtui-dark" }  # inline\n[store]\nbackups = 5\n',
    "indented, CRLF": '[ui]\r\n  theme   =   "memtui-dark"\t# tabbed\r\n[store]\r\nbackups = 5\r\n',
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_saving_the_theme_changes_only_its_value(layout: str, tmp_path: Path) -> None:
    text = LAYOUTS[layout]
    config = tmp_path / "config.toml"
    config.write_bytes(text.encode())
    save_setting(config, "ui", "theme", "memtui-paper")
    assert config.read_bytes() == text.replace('"memtui-dark"', '"memtui-paper"').encode()
    assert load_settings(config).theme == "memtui-paper"


def test_saving_a_theme_into_a_file_without_ui_appends_one_table(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("# mine\n[store]\nbackups = 5  # five\n")
    save_setting(config, "ui", "theme", 'odd "name"')
    assert (
        config.read_text()
        == '# mine\n[store]\nbackups = 5  # five\n\n[ui]\ntheme = "odd \\"name\\""\n'
    )
    assert load_settings(config).theme == 'odd "name"'
    save_setting(config, "ui", "theme", "memtui-paper")
    assert config.read_text().count("[ui]") == 1
    missing = tmp_path / "new" / "config.toml"
    save_setting(missing, "ui", "theme", "memtui-paper")
    assert load_settings(missing).theme == "memtui-paper"


def test_a_failed_write_leaves_the_config_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    text = '[ui]\ntheme = "memtui-dark"\n'
    config.write_text(text)

    def crash(src: object, dst: object) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr("memtui.stores.file.files.os.replace", crash)
    with pytest.raises(OSError, match="disk gone"):
        save_setting(config, "ui", "theme", "memtui-paper")
    assert config.read_text() == text


def test_a_symlinked_config_keeps_its_link(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "memtui.toml"
    real.parent.mkdir()
    real.write_text('[ui]\ntheme = "memtui-dark"\n')
    link = tmp_path / "config.toml"
    link.symlink_to(real)
    save_setting(link, "ui", "theme", "memtui-paper")
    assert link.is_symlink() and real.read_text() == '[ui]\ntheme = "memtui-paper"\n'


def test_an_invalid_config_is_not_overwritten(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[ui\ntheme = 1\n")
    with pytest.raises(MemtuiError, match=r"not valid TOML.*ui\.theme not saved"):
        save_setting(config, "ui", "theme", "memtui-paper")
    assert config.read_text() == "[ui\ntheme = 1\n"


@pytest.mark.parametrize("layout", ["commented header", "dotted key"])
async def test_theme_switch_in_the_app_keeps_the_file_and_later_commands_work(
    layout: str, tmp_path: Path, fixture_copy: Callable[[str], Path], cli: Callable[..., CliResult]
) -> None:
    store = fixture_copy("example-store.json")
    config = tmp_path / "config.toml"
    config.write_text(LAYOUTS[layout])
    app = make_app(str(store), load_settings(config), now=NOW, watch_interval=0, config_path=config)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        commands = {name: run for name, _, run in app.palette_commands()}
        commands["theme: memtui-paper"]()
        await pilot.pause()
        assert app.theme == "memtui-paper"
    assert config.read_text() == LAYOUTS[layout].replace('"memtui-dark"', '"memtui-paper"')
    result = cli("--config", config, "stats", store)
    assert result.code == 0, result.err


# -- loading: one-line errors naming the file, the table and the key --------------------------

BAD = {
    '[profiles.pi]\nmerge_threshold = "0.35"\n': (
        '[profiles.pi] merge_threshold: expected a number, got the string "0.35"'
    ),
    "[profiles.pi]\ncluster_max = 'many'\n": (
        '[profiles.pi] cluster_max: expected a whole number, got the string "many"'
    ),
    "[profiles.pi]\ncluster_max = 4.5\n": (
        "[profiles.pi] cluster_max: expected a whole number, got the number 4.5"
    ),
    "[profiles.pi]\nexclude_user_source = 1\n": (
        "[profiles.pi] exclude_user_source: expected true or false, got the number 1"
    ),
    "[profiles.pi]\nmerge_threshold = true\n": (
        "[profiles.pi] merge_threshold: expected a number, got true"
    ),
    "[profiles.pi]\nmerge_threshold = 1.5\n": (
        "[profiles.pi] merge_threshold: must be above 0 and at most 1, got 1.5"
    ),
    "[profiles.longterm]\nabsorb_threshold = 0\n": (
        "[profiles.longterm] absorb_threshold: must be above 0 and at most 1, got 0"
    ),
    "[profiles.thesearch]\nthesearch_merge_score = 0.4\n": (
        "[profiles.thesearch] thesearch_merge_score: must be above thesearch_title_weight "
        "(0.4), got 0.4"
    ),
    "[profiles.pi]\ncluster_min = 9\n": (
        "[profiles.pi] cluster_min: must be at most cluster_max (8)"
    ),
    '[profiles.pi]\nmethod = "cosine"\n': "[profiles.pi] method: expected one of pi, tf-cosine",
    '[profiles.longterm]\nconflict_categories = "fact"\n': (
        '[profiles.longterm] conflict_categories: expected a list of strings, got the string "fact"'
    ),
    "[profiles.pi]\nmerge_treshold = 0.5\n": "[profiles.pi] has no parameter 'merge_treshold'",
    "[profiles.pi]\nname = 'x'\n": "[profiles.pi] has no parameter 'name'",
    "[profiles.nope]\nmerge_threshold = 0.5\n": "[profiles.nope]: no such profile (use pi,",
    '[store]\nbackups = "5"\n': '[store] backups: expected a whole number, got the string "5"',
    "[store]\nbackups = 0\n": "[store] backups: must be at least 1, got 0",
    "[ui]\ntheme = 3\n": "[ui] theme: expected a string, got the number 3",
    '[ui]\nthem = "x"\n': "[ui] them: no such setting (use theme)",
    '[keymap]\n"table.mark" = 1\n': "[keymap] table.mark: expected a string, got the number 1",
    "[llm]\nconcurrency = 0\n": "[llm] concurrency: must be at least 1, got 0",
    "[llm]\ntimeout = 'long'\n": '[llm] timeout: expected a number, got the string "long"',
    "ui = 3\n": "[ui]: expected a table, got the number 3",
    'theme = "x"\n': "theme: not a memtui setting",
    "[ui\n": "not valid TOML",
}


@pytest.mark.parametrize("text", BAD)
def test_a_bad_setting_is_one_line_naming_file_and_key(
    text: str, tmp_path: Path, fixture_copy: Callable[[str], Path], cli: Callable[..., CliResult]
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(text)
    store = fixture_copy("realistic-store.json")
    result = cli("--config", config, "plan", store)
    assert result.code == 1 and result.out == ""
    assert result.err.startswith(f"memtui: {config}: {BAD[text]}"), result.err
    assert result.err.count("\n") == 1 and "Traceback" not in result.err


def test_settings_are_checked_once_for_every_command(
    tmp_path: Path, fixture_copy: Callable[[str], Path], cli: Callable[..., CliResult]
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[profiles.pi]\nmerge_threshold = "0.35"\n')
    store = fixture_copy("realistic-store.json")
    for args in (("stats", store), ("pairs", store), ("decay", store), ("list", store)):
        result = cli("--config", config, *args)
        assert result.code == 1 and "merge_threshold: expected a number" in result.err, args


def test_a_config_named_with_the_flag_must_exist(tmp_path: Path) -> None:
    with pytest.raises(MemtuiError, match="no such config file"):
        load_user_settings(str(tmp_path / "typo.toml"))
    # the default location (and $MEMTUI_CONFIG) may be absent: defaults then
    assert load_user_settings(None) == Settings(path=Path(os.environ["MEMTUI_CONFIG"]))


def test_the_tui_command_line_reads_the_flag_too(
    tmp_path: Path, fixture_copy: Callable[[str], Path], cli: Callable[..., CliResult]
) -> None:
    missing = tmp_path / "typo.toml"
    store = fixture_copy("example-store.json")
    for args in (("--config", missing), ("--config", missing, store), (f"--config={missing}",)):
        result = cli(*args)
        assert result.code == 1 and result.err == f"memtui: {missing}: no such config file\n"
    config = tmp_path / "config.toml"
    config.write_text("[store]\nbackups = 3\n")
    assert cli(f"--config={config}", "locate").out.startswith(f"config         {config}\n")


def test_settings_are_typed(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[store]\nbackups = 3\ndefault = "~/m.json"\n[ui]\ntheme = "memtui-paper"\n'
        '[keymap]\n"table.mark" = "x"\n[llm]\nurl = "http://127.0.0.1:9/v1"\ntimeout = 5\n'
        + OVERRIDES
    )
    settings = load_settings(config)
    assert settings == Settings(
        keep_backups=3,
        default_store="~/m.json",
        theme="memtui-paper",
        keymap={"table.mark": "x"},
        llm={"url": "http://127.0.0.1:9/v1", "timeout": 5.0},
        profiles={"pi": {"merge_threshold": 0.5}},
        path=config,
    )


# -- one profile resolution --------------------------------------------------------------------


def test_resolve_profile_applies_the_overrides_of_the_chosen_profile() -> None:
    settings = Settings(profiles={"pi": {"merge_threshold": 0.5, "cluster_max": 4}})
    pi = resolve_profile(settings, "pi")
    assert (pi.name, pi.merge_threshold, pi.cluster_max) == ("pi", 0.5, 4)
    assert resolve_profile(settings, "default") == get_profile("default")  # no override for it
    assert resolve_profile(settings, "default", "pi").merge_threshold == 0.5
    with pytest.raises(MemtuiError, match="unknown profile 'nope'"):
        resolve_profile(settings, "pi", "nope")


def _plan(cli: Callable[..., CliResult], *args: str | Path) -> dict[str, object]:
    result = cli(*args)
    assert result.code == 0, result.err
    plan: dict[str, object] = json.loads(result.out)
    return plan


def test_config_flag_and_environment_give_the_same_plan(
    tmp_path: Path,
    fixture_copy: Callable[[str], Path],
    cli: Callable[..., CliResult],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = tmp_path / "x.toml"
    config.write_text(OVERRIDES)
    store = fixture_copy("realistic-store.json")
    default = _plan(cli, "plan", store, "--json")
    flag = _plan(cli, "--config", config, "plan", store, "--json")
    old_flag = _plan(cli, "plan", store, "--config", config, "--json")
    monkeypatch.setenv("MEMTUI_CONFIG", str(config))
    env = _plan(cli, "plan", store, "--json")
    assert flag == env == old_flag
    assert flag != default  # the override changed the plan
    assert flag["params"]["merge_threshold"] == 0.5  # type: ignore[index]
    # the flag wins over the environment
    other = tmp_path / "other.toml"
    other.write_text("[profiles.pi]\nmerge_threshold = 0.9\n")
    assert _plan(cli, "--config", other, "plan", store, "--json") != env


def test_pairs_and_decay_read_the_overrides(
    tmp_path: Path, fixture_copy: Callable[[str], Path], cli: Callable[..., CliResult]
) -> None:
    config = tmp_path / "x.toml"
    config.write_text(
        OVERRIDES + 'decay_model = "longterm"\ndecay_rate = 0.5\narchive_line = 0.25\n'
    )
    store = fixture_copy("realistic-store.json")
    assert "pi ≥ 0.5" in cli("--config", config, "pairs", store).err
    assert "pi ≥ 0.3" in cli("pairs", store).err
    decay = json.loads(cli("--config", config, "decay", store, "--json").out)
    assert (decay["model"], decay["line"]) == ("longterm", 0.25)


async def test_tui_screens_plan_with_the_same_overrides_as_the_cli(
    tmp_path: Path, fixture_copy: Callable[[str], Path], cli: Callable[..., CliResult]
) -> None:
    config = tmp_path / "x.toml"
    config.write_text(OVERRIDES + "archive_line = 0.25\n")
    store = fixture_copy("realistic-store.json")
    expected = _plan(cli, "--config", config, "plan", store, "--json")
    default = _plan(cli, "plan", store, "--json")

    def actions(plan: dict[str, object]) -> list[tuple[str, list[str]]]:
        return [(a["kind"], a["targets"]) for a in plan["actions"]]  # type: ignore[attr-defined, index]

    assert actions(expected) != actions(default)
    app = make_app(str(store), load_settings(config), now=NOW, watch_interval=0)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press("p")
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, PlanScreen) and screen.plan is not None
        assert actions(screen.plan.to_dict()) == actions(expected)
        assert screen.plan.params["merge_threshold"] == 0.5
        await pilot.press("escape")
        await ready(pilot)
        await pilot.press("c")
        await ready(pilot)
        assert isinstance(app.screen, ClustersScreen) and app.screen.threshold == 0.5
        await pilot.press("escape")
        await ready(pilot)
        await pilot.press("d")
        await ready(pilot)
        assert isinstance(app.screen, DecayScreen) and app.screen.profile.archive_line == 0.25
