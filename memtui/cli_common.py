"""What every `memtui` command shares: JSON output, the usage error."""

from __future__ import annotations

import json
from typing import Any

from memtui.textsafe import json_safe


def emit_json(value: Any) -> None:
    print(json_safe(json.dumps(value, ensure_ascii=False, indent=2)))


class UsageError(Exception):
    """Bad arguments: exit status 2, like argparse's own errors."""
