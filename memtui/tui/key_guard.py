"""Which screen a key was typed at, and how long after the key before it, so that no burst of
keys ever writes to the store.

Textual routes a key to the focused widget when it reads it, and runs the key's bindings when
the key has bubbled back up to the app, against the screen on top *then*. In a burst (a paste,
tmux send-keys, typing on a stalled machine: every key of it read at once, before the first is
handled) the screen on top may have changed in between: "buy" typed at the table opened the
Undo question on `u`, and its `y`, routed to the table before the question existed, answered
it. So:

- a key runs bindings only on the screen it was typed at (`typed_at`): one that was covered
  (or closed) since does nothing;
- a binding that writes (bindings.py `writes`) does not run when its key came in a burst,
  less than `BURST` after the key before it;
- a question drops every key until it has been quiet for its settling time (screens.Question).
"""

from __future__ import annotations

import math
from collections import OrderedDict

from textual import events
from textual.screen import Screen

# keys read closer together than this came in one read of the terminal, not from a person's
# fingers: in tmux on a loaded machine a send-keys burst's keys were read within 4 ms of each
# other, keys sent 0.1 s apart 0.11-0.12 s apart; a fast typist's are 60 ms apart or more
BURST = 0.03

_KEPT = 256  # keys handled by a widget never reach the app: forget all but the newest


class KeyReads:
    """For each key the app read: the screen on top when it was read, and the gap since the
    key read before it (seconds)."""

    def __init__(self) -> None:
        self.last_time = -math.inf
        self._reads: OrderedDict[int, tuple[events.Key, Screen[object], float]] = OrderedDict()

    def read(self, event: events.Key, screen: Screen[object]) -> float:
        gap = event.time - self.last_time
        self.last_time = max(self.last_time, event.time)
        self._reads[id(event)] = (event, screen, gap)
        while len(self._reads) > _KEPT:
            self._reads.popitem(last=False)
        return gap

    def typed_at(self, event: events.Key) -> tuple[Screen[object], float] | None:
        """The screen `event` was read on and its gap (None: a key memtui posted itself)."""
        found = self._reads.pop(id(event), None)
        if found is None or found[0] is not event:
            return None
        return found[1], found[2]
