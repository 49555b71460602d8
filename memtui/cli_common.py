"""What every `memtui` command shares: the clock, JSON output, opening a store."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from typing import Any

from memtui.config import Settings
from memtui.errors import MemtuiError
from memtui.stores import Store
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
    print(json_safe(json.dumps(value, ensure_ascii=False, indent=2)))


def open_cli_store(location: str, settings: Settings) -> Store:
    return Store.open(location, settings.keep_backups)
