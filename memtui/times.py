"""UTC datetimes to and from the stores' encodings (epoch ms, RFC 3339); no clock reads."""

from __future__ import annotations

import functools
from datetime import UTC, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)
# Go's zero time.Time, as its JSON encoder writes it: means "unset".
GO_ZERO_TIME = "0001-01-01T00:00:00Z"


def from_epoch_ms(ms: int | float) -> datetime:
    if type(ms) is int:
        seconds, rest = divmod(ms, 1000)
        return EPOCH + timedelta(0, seconds, rest * 1000)
    return EPOCH + timedelta(milliseconds=ms)


def to_epoch_ms(dt: datetime) -> int:
    return (dt - EPOCH) // _MS


def epoch_ms_float(dt: datetime) -> float:
    """Epoch milliseconds with the fraction (exact for microsecond times, as pi stores them)."""
    return (dt - EPOCH) / _MS


_fromisoformat = datetime.fromisoformat


def parse_iso(text: str | None) -> datetime | None:
    """RFC 3339 / ISO 8601 to an aware UTC datetime; None, "" and Go's zero time mean unset.

    Fractions finer than a microsecond are cut (Python keeps microseconds).
    """
    if not text or text == GO_ZERO_TIME:
        return None
    try:
        dt = _fromisoformat(text)
    except ValueError:
        return _parse_iso_slowly(text)
    if dt.tzinfo is UTC and dt.year > 1:  # the common case, kept fast for 100k-entry loads
        return dt
    return _parse_iso_slowly(text)


def parse_iso_or_none(text: str | None) -> datetime | None:
    """`parse_iso`, with None also for text that is not a time (for callers that name it)."""
    try:
        return parse_iso(text)
    except ValueError:
        return None


class TimeRangeError(ValueError):
    """A valid RFC 3339 time that is not within years 1-9999 once in UTC."""


def _parse_iso_slowly(text: str) -> datetime | None:
    if text.startswith("0001-01-01T00:00:00"):
        return None
    if "." in text:
        head, _, tail = text.partition(".")
        digits = len(tail) - len(tail.lstrip("0123456789"))
        if digits > 6:
            text = f"{head}.{tail[:6]}{tail[digits:]}"
    dt = datetime.fromisoformat(text)
    if dt.tzinfo is None:
        return dt.replace(tzinfo=UTC)
    try:
        return dt.astimezone(UTC)
    except OverflowError:
        raise TimeRangeError(f"{text[:40]!r} is outside years 1-9999 in UTC") from None


def format_iso(dt: datetime | None) -> str | None:
    """`2026-07-26T11:00:00Z`, with the fraction only when non-zero and without trailing zeros
    (the form Go's RFC3339Nano writes)."""
    if dt is None:
        return None
    if dt.tzinfo is not UTC:
        dt = dt.astimezone(UTC)
    text = dt.isoformat()[:-6]  # without "+00:00"
    if dt.microsecond:
        text = text.rstrip("0")
    return text + "Z"


# an entry's times recur in its next image and record: format each once
format_iso_cached = functools.lru_cache(maxsize=4096)(format_iso)


def days_between(start: datetime, end: datetime) -> float:
    return (end - start).total_seconds() / 86400.0


def to_base36(n: int) -> str:
    """As JavaScript's `n.toString(36)` (pi's ids carry the creation time this way)."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out
