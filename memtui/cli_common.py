"""What every `memtui` command shares: JSON output, the usage error."""

from __future__ import annotations

from typing import Any

from memtui.jsonout import dumps_text
from memtui.textsafe import json_safe


def emit_json(value: Any) -> None:
    print(json_safe(dumps_text(value, indent=True)))


class UsageError(Exception):
    """Bad arguments: exit status 2, like argparse's own errors."""
