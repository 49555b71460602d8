"""Progress of a commit (apply, undo, rollback): stages with counts, reported to a callback
sparingly so that a large transaction pays nothing per entry for being watched."""

from __future__ import annotations

import time
from collections.abc import Callable

CommitProgress = Callable[[str, int, int], None]
"""Called with (stage, done, total): a stage starts at 0 and ends at `total`; the counts of
one stage only grow. Called on the thread that commits."""

# between a stage's first and last report: at most one report per 1 % of it, and not more
# often than every 50 ms
_STEPS = 100
_INTERVAL = 0.05


class Stage:
    """One stage of a commit: reports 0 on creation, then `tick(done)` now and then, and
    `total` on `end()`."""

    __slots__ = ("_last", "_next", "_report", "_step", "name", "total")

    def __init__(self, report: CommitProgress | None, name: str, total: int) -> None:
        self._report = report
        self.name = name
        self.total = total
        self._step = max(1, total // _STEPS)
        # with nobody watching, `tick` never gets past its first comparison
        self._next = self._step if report is not None else total + 1
        self._last = time.monotonic()
        if report is not None:
            report(name, 0, total)

    def tick(self, done: int) -> None:
        if done < self._next:
            return
        self._next = done + self._step
        now = time.monotonic()
        if done < self.total and now - self._last >= _INTERVAL and self._report is not None:
            self._last = now
            self._report(self.name, done, self.total)

    def end(self) -> None:
        if self._report is not None and self.total > 0:
            self._report(self.name, self.total, self.total)
