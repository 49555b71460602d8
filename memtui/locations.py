"""Where memtui keeps its files (platformdirs); `--config`, `MEMTUI_CONFIG` and `MEMTUI_DATA`
override."""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_config_path, user_data_path

APP = "memtui"


def config_file(flag: str | os.PathLike[str] | None = None) -> Path:
    """The config file: the `--config` flag, else `$MEMTUI_CONFIG`, else the user's folder."""
    override = flag or os.environ.get("MEMTUI_CONFIG")
    if override:
        return Path(override).expanduser()
    return user_config_path(APP) / "config.toml"


def data_dir() -> Path:
    override = os.environ.get("MEMTUI_DATA")
    if override:
        return Path(override).expanduser()
    return user_data_path(APP)


def error_log() -> Path:
    """Where the TUI appends the traceback of an exception that escaped a handler."""
    return data_dir() / "tui-errors.log"


def demo_store() -> Path:
    return data_dir() / "demo-store.json"


def hermes_demo() -> Path:
    """The `memories` folder `memtui demo --format hermes` writes."""
    return data_dir() / "hermes-demo" / "memories"


def claude_demo() -> Path:
    """The memory folder `memtui demo --format claude-code` writes."""
    return data_dir() / "claude-code-demo" / "memory"


def default_native_store() -> Path:
    return data_dir() / "memories.json"


def pi_store() -> Path:
    return Path("~/.pi/agent/memory-store.json").expanduser()
