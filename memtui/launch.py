"""The `memtui` command's entry point: a signal that arrives while Python loads memtui (about
a third of a second) is held until loading ends, then memtui exits quietly with 128 + its
number; a KeyboardInterrupt raised inside an extension module's start-up printed a traceback
and sometimes crashed the interpreter. The command itself (`memtui.cli.main`) handles signals
its own way."""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from types import FrameType

_HELD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _load() -> Callable[[], int]:
    from memtui.cli import main as command

    return command


def main() -> int:
    caught: list[int] = []

    def hold(signum: int, _frame: FrameType | None) -> None:
        caught.append(signum)

    previous = {s: signal.signal(s, hold) for s in _HELD}
    try:
        command = _load()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    if caught:
        print(
            f"memtui: interrupted ({signal.Signals(caught[0]).name}) while starting",
            file=sys.stderr,
        )
        return 128 + caught[0]
    return command()
