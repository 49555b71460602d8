"""Whether a plan's `now` fits the store's own times: a clock behind the entries would write
decay anchors into the past, and a plan made for a later time than the clock applies it at
would too. No clock reads: every `now` is given."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from memtui.errors import MemtuiError
from memtui.model import Memory
from memtui.textsafe import one_line
from memtui.times import format_iso

# the times an entry records that a correct clock has passed (an agent's update time is its
# own clock's, so it is not one of them)
_FIELDS = (("created", "created_at"), ("decayed", "last_decayed_at"))
# two clocks (a database server's, another machine's) may differ by this much
SKEW = timedelta(minutes=5)


def newest_time(memories: Iterable[Memory]) -> tuple[datetime, Memory, str] | None:
    """The latest time the entries record (created, decayed), the entry, which."""
    best: tuple[datetime, Memory, str] | None = None
    for memory in memories:
        for what, name in _FIELDS:
            when = getattr(memory, name)
            if when is not None and (best is None or when > best[0]):
                best = (when, memory, what)
    return best


def check_not_before_entries(memories: Iterable[Memory], now: datetime, what: str) -> None:
    """Refuse a `now` (`what` says whose: "the clock", "--now", "the plan's time") earlier
    than a time the entries record (by more than two clocks may differ)."""
    newest = newest_time(memories)
    if newest is None or newest[0] <= now + SKEW:
        return
    when, memory, field = newest
    raise MemtuiError(
        f"{what} ({format_iso(now)}) is before the store's own times: entry "
        f"{one_line(memory.id)} was {field} at {format_iso(when)}; a plan as of then would "
        "write decay times into the past — set the clock right (or a later --now) and plan again"
    )


def check_plan_not_ahead(plan_now: datetime, now: datetime) -> None:
    """Refuse to apply, at `now`, a plan made as of a later time."""
    if plan_now > now + SKEW:
        raise MemtuiError(
            f"the plan was made as of {format_iso(plan_now)}, later than the clock "
            f"({format_iso(now)}); applying it would write times from the future — check the "
            "clock, or make the plan again"
        )
