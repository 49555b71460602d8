"""User settings: one typed model read from a TOML file (see `memtui locate`)."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memtui.llm import LlmSettings

from memtui.errors import MemtuiError
from memtui.stores.backups import DEFAULT_KEEP


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
    llm: dict[str, Any] = field(default_factory=dict)
    """`[llm]`: url, model, api_key_env (the *name* of the variable holding the key),
    concurrency, timeout, max_retries, merge_max_chars. See `llm_settings`."""
    path: Path | None = None
    """The file these settings came from (and where the TUI saves the theme)."""


def load_settings(path: Path) -> Settings:
    """Settings from `path`; defaults when it does not exist; a MemtuiError when it is bad."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Settings(path=path)
    except (OSError, UnicodeDecodeError) as e:
        raise MemtuiError(f"config file {path}: cannot read it ({e})") from None
    except tomllib.TOMLDecodeError as e:
        raise MemtuiError(f"config file {path}: not valid TOML ({e})") from None
    settings = Settings(path=path)
    store = _table(raw, "store", path)
    ui = _table(raw, "ui", path)
    backups = store.get("backups", settings.keep_backups)
    if not isinstance(backups, int) or isinstance(backups, bool) or backups < 1:
        raise MemtuiError(f"config file {path}: [store] backups must be a whole number ≥ 1")
    settings.keep_backups = backups
    settings.default_store = _opt_str(store, "default", path, "store")
    settings.theme = _opt_str(ui, "theme", path, "ui") or settings.theme
    keymap = _table(raw, "keymap", path)
    for key, value in keymap.items():
        if not isinstance(value, str):
            raise MemtuiError(f"config file {path}: [keymap] {key} must be a string of keys")
    settings.keymap = dict(keymap)
    settings.llm = _table(raw, "llm", path)
    if "api_key" in settings.llm:
        raise MemtuiError(
            f"config file {path}: [llm] api_key is not read: put the key in an environment "
            "variable and name it with api_key_env"
        )
    return settings


def _table(raw: dict[str, Any], name: str, path: Path) -> dict[str, Any]:
    value = raw.get(name, {})
    if not isinstance(value, dict):
        raise MemtuiError(f"config file {path}: [{name}] must be a table")
    return value


def _opt_str(table: dict[str, Any], key: str, path: Path, name: str) -> str | None:
    value = table.get(key)
    if value is not None and not isinstance(value, str):
        raise MemtuiError(f"config file {path}: [{name}] {key} must be a string")
    return value


def save_setting(path: Path, table: str, key: str, value: str) -> None:
    """Set `[table] key = "value"` in the config file, leaving every other line (comments
    included) as it is."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    entry = f"{key} = {_toml_string(value)}"
    header = f"[{table}]"
    start = next((n for n, line in enumerate(lines) if line.strip() == header), None)
    if start is None:
        if lines and lines[-1].strip():
            lines.append("")
        lines += [header, entry]
    else:
        end = next(
            (n for n in range(start + 1, len(lines)) if lines[n].strip().startswith("[")),
            len(lines),
        )
        for n in range(start + 1, end):
            if lines[n].split("=", 1)[0].strip() == key:
                lines[n] = entry
                break
        else:
            lines.insert(start + 1, entry)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _toml_string(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


_LLM_TYPES: dict[str, type | tuple[type, ...]] = {
    "url": str,
    "model": str,
    "api_key_env": str,
    "concurrency": int,
    "timeout": (int, float),
    "max_retries": int,
    "merge_max_chars": int,
}
_LLM_ENV = {
    "url": "MEMTUI_LLM_URL",
    "model": "MEMTUI_LLM_MODEL",
    "api_key_env": "MEMTUI_LLM_KEY_ENV",
    "concurrency": "MEMTUI_LLM_CONCURRENCY",
}


def llm_settings(settings: Settings, **flags: Any) -> LlmSettings:
    """The model API to use: flags over `MEMTUI_LLM_*` variables over the config's `[llm]`."""
    from memtui.llm import LlmSettings  # httpx only when a model is used

    values: dict[str, Any] = {}
    for key, value in settings.llm.items():
        expected = _LLM_TYPES.get(key)
        if expected is None:
            raise MemtuiError(f"config file {settings.path}: [llm] has no setting {key!r}")
        if isinstance(value, bool) or not isinstance(value, expected):
            raise MemtuiError(f"config file {settings.path}: [llm] {key} has the wrong type")
        values[key] = value
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
