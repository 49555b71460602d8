"""What every `memtui` command shares: JSON output, the usage error and the checks of option
values that raise it (exit 2; a runtime failure exits 1)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from memtui.errors import MemtuiError
from memtui.jsonout import dumps_text
from memtui.service import Store, Transaction
from memtui.textsafe import json_safe


def emit_json(value: Any) -> None:
    print(json_safe(dumps_text(value, indent=True)))


def print_done(what: str, store: Store, tx: Transaction) -> None:
    """What a change did, then how to undo it."""
    print(what)
    print(f"undo with: memtui undo {store.path} {tx.id}")


T = TypeVar("T")


class UsageError(Exception):
    """Bad arguments: exit status 2, like argparse's own errors."""


def usage_checked(check: Callable[[], T]) -> T:
    """Run a pure check of an option's value: what it refuses is a usage error (exit 2)."""
    try:
        return check()
    except UsageError:
        raise
    except MemtuiError as e:
        raise UsageError(str(e)) from None


def check_fraction(option: str, value: float | None, *, zero: bool = True) -> None:
    """An option that is a number from 0 (or just above it, `zero=False`) to 1."""
    if value is None:
        return
    above_low = value >= 0.0 if zero else value > 0.0
    if not above_low or value > 1.0:
        side = "between 0 and 1" if zero else "above 0 and at most 1"
        raise UsageError(f"{option} must be {side}, got {value:g}")
