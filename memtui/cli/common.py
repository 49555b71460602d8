"""What every `memtui` command shares: JSON output, the usage error and the checks of option
values that raise it (exit 2; a runtime failure exits 1), starting the terminal UI.

Imported by every command: nothing here loads the engine or the stores."""

from __future__ import annotations

import argparse
import codecs
import io
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from memtui.errors import MemtuiError
from memtui.jsonout import dumps_text
from memtui.textsafe import json_safe, one_line, redecoded

if TYPE_CHECKING:
    from memtui.service import Service
    from memtui.stores.ledger import Transaction
    from memtui.stores.protocol import MemoryStore


def emit_json(value: Any) -> None:
    print(json_safe(dumps_text(value, indent=True)))


# the arguments that are text for the store (not paths): a non-UTF-8 locale hands them over
# as surrogate escapes, decoded again here (`redecode_text`)
TEXT_ARGUMENTS = (
    "content", "tags", "query", "category", "user", "reason", "id", "ids", "a", "b", "old",
    "new", "only", "skip", "status",
)  # fmt: skip


def redecode_text(args: argparse.Namespace) -> None:
    """Decode the text arguments as the UTF-8 they are whatever the locale said; a usage
    error names one whose bytes are not UTF-8."""
    for name in TEXT_ARGUMENTS:
        value = getattr(args, name, None)
        values = value if isinstance(value, list) else [value]
        fixed = []
        for item in values:
            if not isinstance(item, str):
                fixed.append(item)
                continue
            text = redecoded(item)
            if text is None:
                shown = os.fsencode(item).decode("ascii", "backslashreplace")
                raise UsageError(
                    f"'{one_line(shown[:60])}' on the command line is not UTF-8 text (is the "
                    "terminal's encoding UTF-8?); nothing was written"
                )
            fixed.append(text)
        setattr(args, name, fixed if isinstance(value, list) else fixed[0])


def readable_output() -> None:
    """Text a stdout or stderr in another encoding than UTF-8 cannot hold is written
    escaped (`\\u4e2d`), never a crash."""
    for stream in (sys.stdout, sys.stderr):
        if (
            isinstance(stream, io.TextIOWrapper)
            and codecs.lookup(stream.encoding).name != "utf-8"
            and stream.errors in ("strict", "surrogateescape")
        ):
            stream.reconfigure(errors="backslashreplace")


def print_done(what: str, store: MemoryStore, tx: Transaction) -> None:
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


def run_tui(store: str | None, svc: Service, start_screen: str | None = None) -> int:
    """The terminal UI on a store (None: the store picker); on no terminal, how to get one."""
    from memtui.tui import check_keymap

    problems = check_keymap(svc.settings)
    if problems:
        raise UsageError("\n".join(f"memtui: {p}" for p in problems).removeprefix("memtui: "))
    shown = svc.stores.shown_location(store) if store else None
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        target = shown or "STORE"
        print(
            f"memtui: not a terminal, so no UI; run `memtui {target}` in a terminal, "
            f"or use `memtui stats {target}` and `memtui list {target}`",
            file=sys.stderr,
        )
        return 0 if store else 1
    from memtui.tui import run_app

    return run_app(store, svc, start_screen)
