"""The app's edge of garbage collection: what a load or a commit builds (records, the ledger's
images, the ids) lives until the next one, so it is frozen (`gc.freeze`) once built; the
cyclic collector's full passes, which hold the GIL and so the UI thread, then walk only what
the screens allocate since. memtui's own pass runs once a load or a commit has been shown
(and the screen it came from closed, so that it is collected, not frozen), never in the middle
of typing. The core knows nothing of this (docs/design.md#tui)."""

from __future__ import annotations

import gc


def freeze_new() -> None:
    """Freeze what exists now, at no cost (no pass): the first load, before the first key."""
    gc.freeze()


def settle(*, everything: bool = False) -> None:
    """Collect what is not frozen (built since the last settle, garbage of closed screens),
    then freeze what survives. `everything`: the frozen generation too, for the garbage of
    screens that were open at an earlier freeze; one pass over every object (a reload)."""
    if everything:
        gc.unfreeze()
    gc.collect()
    gc.freeze()


def release() -> None:
    """The app ends: the process's objects are collected as usual again."""
    gc.unfreeze()
