"""What every `memtui` command shares: JSON output, the usage error."""

from __future__ import annotations

from typing import Any

from memtui.jsonout import dumps_text
from memtui.service import Store, Transaction
from memtui.textsafe import json_safe


def emit_json(value: Any) -> None:
    print(json_safe(dumps_text(value, indent=True)))


def print_done(what: str, store: Store, tx: Transaction) -> None:
    """What a change did, then how to undo it."""
    print(what)
    print(f"undo with: memtui undo {store.path} {tx.id}")


class UsageError(Exception):
    """Bad arguments: exit status 2, like argparse's own errors."""
