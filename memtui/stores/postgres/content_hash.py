"""The Go system's `content_hash`: sha256 of its `encoding/json` form of a memory record.

Go's encoder differs from Python's: no spaces; `<`, `>`, `&`, U+2028 and U+2029 escaped;
control characters other than \\n, \\r, \\t as `\\u00XX` (go 1.19, which has no `\\b` or `\\f`);
other non-ASCII raw; floats in the shortest round-trip form, in exponent form only below 1e-6
or from 1e21, without a leading zero in the exponent, and integer-valued floats without `.0`.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import orjson

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f<>&\u2028\u2029\ud800-\udfff]')


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    short = _ESCAPES.get(char)
    if short is not None:
        return short
    if "\ud800" <= char <= "\udfff":  # a lone surrogate is invalid UTF-8: Go writes U+FFFD
        return "\ufffd"
    return f"\\u{ord(char):04x}"


def go_string(text: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def go_float(value: float) -> str:
    """A float64 as Go's encoding/json writes it."""
    if not math.isfinite(value):
        raise ValueError(f"Go's encoding/json cannot write {value}")
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    shortest = Decimal(repr(value)).normalize()
    size = abs(value)
    if 1e-6 <= size < 1e21:
        return format(shortest, "f")
    sign, digits, exponent = shortest.as_tuple()
    assert isinstance(exponent, int)
    mantissa = str(digits[0]) + ("." + "".join(map(str, digits[1:])) if len(digits) > 1 else "")
    power = exponent + len(digits) - 1
    return ("-" if sign else "") + mantissa + ("e+" if power >= 0 else "e-") + str(abs(power))


def go_time(value: str | datetime) -> str:
    """RFC 3339 in UTC with up to nanoseconds, trailing zeros dropped (Go's RFC3339Nano)."""
    if isinstance(value, datetime):
        when = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        fraction = f"{when.microsecond:06d}"
        when = when.astimezone(UTC).replace(microsecond=0)
    else:
        match = re.fullmatch(r"([^.]+?)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)", value.strip())
        if match is None:
            raise ValueError(f"not an RFC 3339 time: {value!r}")
        head, fraction, zone = match[1], match[2] or "", match[3]
        when = datetime.fromisoformat(head + ("+00:00" if zone == "Z" else zone))
        when = when.astimezone(UTC)
    fraction = fraction.rstrip("0")
    return when.strftime("%Y-%m-%dT%H:%M:%S") + ("." + fraction if fraction else "") + "Z"


def _numbers(values: Iterable[float]) -> str:
    return "[" + ",".join(go_float(float(v)) for v in values) + "]"


def _embedding(value: Any) -> list[float] | None:
    """The numbers Go's `[]float32` would hold (a text column's JSON array read; a value that
    is not numbers left out)."""
    if isinstance(value, str):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    if not isinstance(value, list | tuple) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in value
    ):
        return None
    return list(value)


def canonical_json(record: Mapping[str, Any]) -> str:
    """The object Go hashes, in its key order, `omitempty` keys left out when empty."""
    get = record.get
    parts = [
        f'"memory_id":{int(record["memory_id"])}',
        f'"user_id":{go_string(get("user_id") or "legacy")}',
        f'"content":{go_string(record["content"] or "")}',
        f'"importance":{go_float(float(get("importance") or 0))}',
    ]
    embedding = _embedding(get("embedding"))
    if embedding:
        parts.append(f'"embedding":{_numbers(embedding)}')
    for key in ("embedding_model", "embedding_revision", "category"):
        if get(key):
            parts.append(f'"{key}":{go_string(record[key])}')
    tags = get("tags")
    if tags:
        parts.append('"tags":[' + ",".join(go_string(t) for t in sorted(tags)) + "]")
    if get("slot_hint"):
        parts.append(f'"slot_hint":{go_string(record["slot_hint"])}')
    parts.append(f'"version":{int(get("version") or 0)}')
    deleted_at = get("deleted_at")
    if deleted_at:
        parts.append(f'"deleted_at":"{go_time(deleted_at)}"')
    if get("quarantined"):
        parts.append('"quarantined":true')
    if get("superseded"):
        parts.append('"superseded":true')
    supersedes = get("supersedes")
    if supersedes:
        parts.append(
            '"supersedes":[' + ",".join(str(i) for i in sorted(map(int, supersedes))) + "]"
        )
    return "{" + ",".join(parts) + "}"


def content_hash(record: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json(record).encode()).hexdigest()


def utc_naive(when: datetime) -> datetime:
    """A time as the table's `TIMESTAMP` (without time zone) column holds it: UTC, naive."""
    if when.tzinfo is None:
        return when
    return when.astimezone(UTC).replace(tzinfo=None)
