"""The terminal UI (Textual). `make_app` is the one factory the CLI, the tests and the
screenshot script use."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from memtui import locations
from memtui.config import Settings
from memtui.service import Service


def resolve_store(store: str | None, settings: Settings, now: datetime) -> tuple[str, str | None]:
    """Which store `memtui [STORE]` opens, and a hint for the user when it is a new one:
    the argument, else $MEMTUI_STORE, else the configured default, else pi's store if it
    exists, else memtui's own default store (created empty)."""
    chosen = store or os.environ.get("MEMTUI_STORE") or settings.default_store
    if chosen:
        return str(Path(chosen).expanduser()), None
    pi = locations.pi_store()
    if pi.exists():
        return str(pi), None
    native = locations.default_native_store()
    if not native.exists():
        from memtui.stores import create_native_store

        native.parent.mkdir(parents=True, exist_ok=True)
        create_native_store(native, [], now=now, kind="create", reason="memtui's default store")
    return str(native), "Your memtui store is empty. Run `memtui demo` to explore a realistic one."


def make_app(
    store: str,
    settings: Settings | None = None,
    *,
    now: datetime | None = None,
    watch_interval: float = 3.0,
    config_path: Path | None = None,
    hint: str | None = None,
):  # type: ignore[no-untyped-def]
    from memtui.tui.app import MemtuiApp

    return MemtuiApp(
        store, settings, now=now, watch_interval=watch_interval, config_path=config_path, hint=hint
    )


def run_app(store: str | None, service: Service) -> int:
    settings = service.settings
    path, hint = resolve_store(store, settings, service.now())
    fixed = service.now() if os.environ.get("MEMTUI_NOW") else None
    config = settings.path or locations.config_file()
    app = make_app(path, settings, now=fixed, config_path=config, hint=hint)
    app.run()
    return app.return_code or 0
