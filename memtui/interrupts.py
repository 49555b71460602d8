"""SIGINT, SIGTERM and SIGHUP told truthfully around a commit.

A front end calls `install()` once: each of the three signals then raises `Interrupted` (a
KeyboardInterrupt) in the main thread, so a commit that has not reached its commit point
unwinds (its backup and ledger intent removed, the lock released) and nothing is written. The
store calls `hold()` just before the rename that commits: from then on a signal is only
recorded, so the bookkeeping after the rename finishes and the front end can say what was
done (`late()` says whether one came). `settle()` ends the hold and returns that signal; the
CLI holds until the command is done (`installed()`), so a command that committed is never
reported as interrupted. Without `install()` (a library use), `hold` and `settle` only
count."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_NAMES: dict[int, str] = {int(s): s.name for s in SIGNALS}

_held = 0  # commits past their commit point (or at it) since the last `settle`
_late: int | None = None  # a signal that came while held


class Interrupted(KeyboardInterrupt):
    """A signal asked memtui to stop before a commit point: nothing was written."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(_NAMES.get(signum, str(signum)))
        self.signum = signum

    @property
    def exit_code(self) -> int:
        """The shell's code for a process stopped by this signal (130 for SIGINT)."""
        return 128 + self.signum


def _handle(signum: int, frame: FrameType | None) -> None:
    global _late
    if _held:
        _late = _late or signum
        return
    raise Interrupted(signum)


def install() -> Callable[[], None]:
    """Make SIGINT, SIGTERM and SIGHUP raise `Interrupted` (main thread only); returns what
    puts the handlers before it back."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    before = {signum: signal.signal(signum, _handle) for signum in SIGNALS}

    def restore() -> None:
        settle()
        for signum, handler in before.items():
            signal.signal(signum, handler)

    return restore


@contextlib.contextmanager
def installed(*, restore: bool = True) -> Iterator[None]:
    """`install()` for the duration of a command; the handlers before it come back after
    (`restore`), or, for a process that only exits next, the signals are ignored: Python's
    exit would put their default back (which ends the process before it wrote its output),
    an ignored one it leaves alone."""
    settle()
    put_back = install()
    try:
        yield
    finally:
        if restore:
            put_back()
        elif threading.current_thread() is threading.main_thread():
            for signum in SIGNALS:
                signal.signal(signum, signal.SIG_IGN)


def hold() -> None:
    """The commit point is reached: from now on a signal is recorded, not raised."""
    global _held
    _held += 1


def unhold() -> None:
    """The commit `hold` was for did not happen after all (its rename failed): signals are
    raised again, one recorded meanwhile now."""
    global _held, _late
    _held = max(0, _held - 1)
    if not _held and _late is not None:
        signum, _late = _late, None
        raise Interrupted(signum)


def late() -> int | None:
    """The signal that came after a commit point, if one did (the hold goes on)."""
    return _late


def settle() -> int | None:
    """End every hold; the signal that came after a commit point, if one did (the change
    it interrupted stands)."""
    global _held, _late
    late, _held, _late = _late, 0, None
    return late


def name(signum: int) -> str:
    return _NAMES.get(signum, f"signal {signum}")
