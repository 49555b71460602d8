"""The terminal UI (Textual). `make_app` is the one factory the CLI, the tests and the
screenshot script use."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from memtui import locations
from memtui.service import Service, Settings

if TYPE_CHECKING:
    from memtui.tui.app import MemtuiApp


def make_app(
    store: str,
    settings: Settings | None = None,
    *,
    now: datetime | None = None,
    watch_interval: float = 3.0,
    config_path: Path | None = None,
    hint: str | None = None,
    service: Service | None = None,
) -> MemtuiApp:
    from memtui.tui.app import MemtuiApp

    return MemtuiApp(
        store,
        settings,
        now=now,
        watch_interval=watch_interval,
        config_path=config_path,
        hint=hint,
        service=service,
    )


def check_keymap(settings: Settings) -> list[str]:
    """The problems with the settings' `[keymap]`, one line each (the CLI asks before it
    starts the TUI)."""
    from memtui.tui.app import MemtuiApp
    from memtui.tui.keymap_check import keymap_problems

    return keymap_problems(MemtuiApp, settings.keymap, settings.keymap_lines, settings.path)


def run_app(store: str | None, service: Service, start_screen: str | None = None) -> int:
    settings = service.settings
    path, hint = service.stores.store_to_open(store)
    fixed = service.now() if os.environ.get("MEMTUI_NOW") else None
    config = settings.path or locations.config_file()
    app = make_app(path, settings, now=fixed, config_path=config, hint=hint, service=service)
    app.start_screen = start_screen
    app.run()
    return app.return_code or 0
