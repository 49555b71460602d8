"""Pausing Python's cyclic garbage collector around work that allocates millions of objects
and creates no reference cycles (parsing a store, planning): its full collections would walk
them again and again, and each walk holds the GIL, freezing the UI thread meanwhile.
Reference counting still frees everything as usual."""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_depth = 0
_was_enabled = True


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
