"""User settings: one typed model of the config file (`memtui locate` shows where it is),
loaded and checked once. Every problem is one line naming the file, the key and what is wrong.

`save_setting` changes one value through tomlkit, so the user's comments and layout stay as
they were, and replaces the file atomically.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from memtui import locations
from memtui.engine.profiles import (
    PROFILE_NAMES,
    PROFILES,
    Profile,
    apply_overrides,
    describe,
    get_profile,
)
from memtui.errors import MemtuiError
from memtui.stores.file.backups import DEFAULT_KEEP
from memtui.stores.postgres.limits import DEFAULT_LIMITS, PgLimits

if TYPE_CHECKING:
    from memtui.llm import LlmSettings


@dataclass(slots=True)
class Settings:
    keep_backups: int = DEFAULT_KEEP
    """`[store] backups`: how many rolling backups to keep beside each store (at least 1)."""
    default_store: str | None = None
    """`[store] default`: the store `memtui` opens when given none and `$MEMTUI_STORE` is unset."""
    theme: str = "memtui-dark"
    """`[ui] theme`: the TUI theme (a memtui theme from themes/ or a Textual built-in)."""
    keymap: dict[str, str] = field(default_factory=dict)
    """`[keymap]`: binding id → keys, e.g. `"table.mark" = "space,x"`."""
    keymap_lines: dict[str, int] = field(default_factory=dict, compare=False)
    """The line of the config file each `[keymap]` entry is on (for one-line errors)."""
    llm: dict[str, Any] = field(default_factory=dict)
    """`[llm]`: url, model, api_key_env (the *name* of the variable holding the key),
    concurrency, timeout, max_retries, merge_max_chars. See `llm_settings`."""
    profiles: dict[str, dict[str, Any]] = field(default_factory=dict)
    """`[profiles.NAME]`: profile parameters to change, e.g. `merge_threshold = 0.5` (see
    `memtui.engine.profiles.Profile`); `resolve_profile` applies them."""
    pg_connect_timeout: float = DEFAULT_LIMITS.connect_timeout
    """`[postgres] connect_timeout`: seconds to wait for a database server to answer a new
    connection (0: no limit)."""
    pg_lock_timeout: float = DEFAULT_LIMITS.lock_timeout
    """`[postgres] lock_timeout`: seconds a change waits for a row another session (the
    agent) holds locked (0: no limit)."""
    pg_statement_timeout: float = DEFAULT_LIMITS.statement_timeout
    """`[postgres] statement_timeout`: seconds one statement may run on the server (0: no
    limit)."""
    path: Path | None = None
    """The file these settings came from (and where the TUI saves the theme)."""


# -- loading ----------------------------------------------------------------------------------

_TABLES = ("store", "ui", "keymap", "llm", "postgres", "profiles")
_LLM_TYPES: dict[str, type] = {
    "url": str,
    "model": str,
    "api_key_env": str,
    "concurrency": int,
    "timeout": float,
    "max_retries": int,
    "merge_max_chars": int,
}
_LLM_LEAST: dict[str, float] = {"concurrency": 1, "max_retries": 0, "merge_max_chars": 1}
_EXPECTED = {str: "a string", int: "a whole number", float: "a number"}


def settings_file(flag: str | None = None) -> Path:
    """The config file every command and the TUI read: `--config`, else `$MEMTUI_CONFIG`,
    else the user's config folder."""
    return locations.config_file(flag)


def load_user_settings(flag: str | None = None) -> Settings:
    """The settings from `settings_file(flag)`; a file named with `--config` must exist."""
    return load_settings(settings_file(flag), must_exist=flag is not None)


def load_settings(path: Path, *, must_exist: bool = False) -> Settings:
    """Settings from `path`; defaults when it does not exist (unless `must_exist`); a one-line
    MemtuiError when it is unreadable, not TOML, or has a setting of the wrong kind."""
    try:
        text = path.read_text(encoding="utf-8")
        raw = tomllib.loads(text)
    except FileNotFoundError:
        if must_exist:
            raise MemtuiError(f"{path}: no such config file") from None
        return Settings(path=path)
    except (OSError, UnicodeDecodeError) as e:
        raise MemtuiError(f"{path}: cannot read the config file ({e})") from None
    except tomllib.TOMLDecodeError as e:
        raise MemtuiError(f"{path}: not valid TOML ({e})") from None
    for key, value in raw.items():
        if key not in _TABLES:
            raise MemtuiError(
                f"{path}: {key}: not a memtui setting (the tables are "
                "[store], [ui], [keymap], [llm], [postgres] and [profiles.NAME])"
            )
        if not isinstance(value, dict):
            raise MemtuiError(f"{path}: [{key}]: expected a table, got {describe(value)}")
    settings = Settings(path=path)
    store = _Table(path, "store", raw.get("store", {}), ("backups", "default"))
    settings.keep_backups = store.get("backups", int, settings.keep_backups, at_least=1)
    settings.default_store = store.get("default", str, None)
    ui = _Table(path, "ui", raw.get("ui", {}), ("theme",))
    settings.theme = ui.get("theme", str, settings.theme)
    keymap = _Table(path, "keymap", raw.get("keymap", {}), None)
    settings.keymap = {key: keymap.get(key, str, "") for key in keymap.values}
    settings.keymap_lines = _keymap_lines(text, settings.keymap)
    settings.llm = _llm(path, raw.get("llm", {}))
    pg = _Table(path, "postgres", raw.get("postgres", {}), _PG_KEYS)
    settings.pg_connect_timeout = _seconds(pg, "connect_timeout", settings.pg_connect_timeout)
    settings.pg_lock_timeout = _seconds(pg, "lock_timeout", settings.pg_lock_timeout)
    settings.pg_statement_timeout = _seconds(pg, "statement_timeout", settings.pg_statement_timeout)
    settings.profiles = _profiles(path, raw.get("profiles", {}))
    return settings


_TABLE_HEADER = re.compile(r"^\s*\[\s*([^\]]+?)\s*\]")
_ENTRY = re.compile(r"""^\s*(?:"([^"]*)"|'([^']*)'|([A-Za-z0-9_.-]+))\s*=""")


def _keymap_lines(text: str, keymap: dict[str, str]) -> dict[str, int]:
    """Where each `[keymap]` entry is in the file (1-based; entries written as `keymap.x =`
    under no table are found too)."""
    lines: dict[str, int] = {}
    table = ""
    for number, line in enumerate(text.splitlines(), start=1):
        header = _TABLE_HEADER.match(line)
        if header:
            table = header.group(1).strip()
            continue
        entry = _ENTRY.match(line)
        if entry is None:
            continue
        key = next(g for g in entry.groups() if g is not None)
        if table == "keymap" and key in keymap:
            lines.setdefault(key, number)
        elif table == "" and key.startswith("keymap.") and key[7:] in keymap:
            lines.setdefault(key[7:], number)
    return lines


@dataclass(slots=True)
class _Table:
    path: Path
    name: str
    values: dict[str, Any]
    known: tuple[str, ...] | None
    """The keys this table may hold (None: any)."""

    def __post_init__(self) -> None:
        for key in self.values:
            if self.known is not None and key not in self.known:
                self.fail(key, f"no such setting (use {', '.join(self.known)})")

    def fail(self, key: str, problem: str) -> NoReturn:
        raise MemtuiError(f"{self.path}: [{self.name}] {key}: {problem}")

    def get(self, key: str, kind: type, default: Any, *, at_least: float | None = None) -> Any:
        if key not in self.values:
            return default
        value = self.values[key]
        number = kind in (int, float) and isinstance(value, int | float)
        if isinstance(value, bool) or not (isinstance(value, kind) or (kind is float and number)):
            self.fail(key, f"expected {_EXPECTED[kind]}, got {describe(value)}")
        if at_least is not None and value < at_least:
            self.fail(key, f"must be at least {at_least:g}, got {value:g}")
        return float(value) if kind is float else value


_PG_KEYS = ("connect_timeout", "lock_timeout", "statement_timeout")


def _seconds(table: _Table, key: str, default: float) -> float:
    value = float(table.get(key, float, default, at_least=0))
    if not math.isfinite(value):
        table.fail(key, f"expected a number of seconds, got {value}")
    return value


def pg_limits(settings: Settings) -> PgLimits:
    """How long a PostgreSQL store waits on its server."""
    return PgLimits(
        settings.pg_connect_timeout, settings.pg_lock_timeout, settings.pg_statement_timeout
    )


def _llm(path: Path, values: dict[str, Any]) -> dict[str, Any]:
    if "api_key" in values:
        raise MemtuiError(
            f"{path}: [llm] api_key: not read: put the key in an environment variable and name "
            "it with api_key_env"
        )
    table = _Table(path, "llm", values, tuple(_LLM_TYPES))
    out = {
        key: table.get(key, kind, None, at_least=_LLM_LEAST.get(key))
        for key, kind in _LLM_TYPES.items()
        if key in values
    }
    if out.get("timeout", 1) <= 0:
        table.fail("timeout", f"must be above 0 seconds, got {out['timeout']:g}")
    return out


def _profiles(path: Path, values: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, overrides in values.items():
        if name not in PROFILES:
            raise MemtuiError(
                f"{path}: [profiles.{name}]: no such profile (use {', '.join(PROFILE_NAMES)})"
            )
        if not isinstance(overrides, dict):
            raise MemtuiError(
                f"{path}: [profiles] {name}: expected a table, got {describe(overrides)}"
            )
        apply_overrides(PROFILES[name], overrides, path)  # every problem shows now, not later
        out[name] = dict(overrides)
    return out


# -- what the settings decide -----------------------------------------------------------------


def resolve_profile(settings: Settings, default: str, name: str | None = None) -> Profile:
    """The profile every front end plans with: `name`, else `default` (the store's own: its
    traits' `default_profile`), with the settings' `[profiles.NAME]` overrides applied."""
    chosen = name or default
    profile = get_profile(chosen)
    overrides = settings.profiles.get(chosen)
    if not overrides:
        return profile
    return apply_overrides(profile, overrides, settings.path or "settings")


_LLM_ENV = {
    "url": "MEMTUI_LLM_URL",
    "model": "MEMTUI_LLM_MODEL",
    "api_key_env": "MEMTUI_LLM_KEY_ENV",
    "concurrency": "MEMTUI_LLM_CONCURRENCY",
}


def llm_settings(settings: Settings, **flags: Any) -> LlmSettings:
    """The model API to use: flags over `MEMTUI_LLM_*` variables over the config's `[llm]`."""
    from memtui.llm import LlmSettings  # httpx only when a model is used

    values: dict[str, Any] = dict(settings.llm)
    for key, variable in _LLM_ENV.items():
        if os.environ.get(variable):
            raw = os.environ[variable]
            if key == "concurrency":
                if not raw.isdigit():
                    raise MemtuiError(f"{variable}={raw!r} is not a whole number")
                values[key] = int(raw)
            else:
                values[key] = raw
    values.update({k: v for k, v in flags.items() if v is not None})
    if not values.get("url") or not values.get("model"):
        raise MemtuiError(
            "the LLM needs a model API: set [llm] url and model in the config, "
            "MEMTUI_LLM_URL and MEMTUI_LLM_MODEL, or --llm-url and --llm-model"
        )
    if values.get("concurrency", 1) < 1:
        raise MemtuiError("the LLM concurrency must be at least 1")
    return LlmSettings(**values)


# -- writing ----------------------------------------------------------------------------------


def save_setting(path: Path, table: str, key: str, value: str) -> None:
    """Set `[table] key = "value"` in the config file. Everything else in the file (comments,
    blank lines, a commented `[table]  # …` header, dotted `table.key = …` keys) stays byte for
    byte; the file is replaced atomically (a symlinked config keeps its link)."""
    import tomlkit  # keeps comments and layout on a round trip, which tomllib cannot
    from tomlkit.exceptions import TOMLKitError

    from memtui.stores.file.files import atomic_write

    target = path.resolve() if path.is_symlink() else path
    try:
        text = target.read_bytes().decode("utf-8")  # not read_text: it would turn CRLF into LF
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as e:
        raise MemtuiError(f"{path}: cannot read the config file ({e})") from None
    try:
        document = tomlkit.parse(text)
    except TOMLKitError as e:
        raise MemtuiError(f"{path}: not valid TOML ({e}); {table}.{key} not saved") from None
    section = document.get(table)
    if section is None:
        section = tomlkit.table()
        document.add(table, section)
    elif not isinstance(section, MutableMapping):
        raise MemtuiError(f"{path}: [{table}]: expected a table, got {describe(section)}")
    section[key] = value
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, tomlkit.dumps(document).encode("utf-8"))
