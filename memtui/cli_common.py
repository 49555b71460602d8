"""What every `memtui` command shares: the clock, JSON output, opening a store."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

from memtui.config import Settings
from memtui.errors import MemtuiError
from memtui.stores import Store
from memtui.stores.jsonout import dumps_text
from memtui.textsafe import json_safe
from memtui.times import parse_iso


def now_utc() -> datetime:
    """The clock, or `$MEMTUI_NOW` (RFC 3339) for reproducible runs."""
    fixed = os.environ.get("MEMTUI_NOW")
    if fixed:
        try:
            when = parse_iso(fixed)
        except ValueError:
            when = None
        if when is None:
            raise MemtuiError(f"MEMTUI_NOW={fixed!r} is not an RFC 3339 time")
        return when
    return datetime.now(UTC)


def emit_json(value: Any) -> None:
    print(json_safe(dumps_text(value, indent=True)))


# stores opened by the running command: what is wrong with their sidecars is said once it is done
_opened: list[Store] = []


def open_cli_store(location: str, settings: Settings) -> Store:
    store = Store.open(location, settings.keep_backups)
    _opened.append(store)
    return store


def forget_opened_stores() -> None:
    _opened.clear()


def sidecar_warnings() -> list[str]:
    """One line per problem with the sidecars of the stores the command opened."""
    lines = []
    for store in dict.fromkeys(_opened):
        problems = store.problems()
        lines += [f"memtui: warning: {p}" for p in problems[:5]]
        if len(problems) > 5:
            lines.append(f"memtui: warning: and {len(problems) - 5} more problems")
        if problems:
            lines.append(f"memtui: `memtui doctor {store.path}` says more")
    _opened.clear()
    return lines
