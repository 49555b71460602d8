"""JSON out: orjson, and the standard library in the same layout for what orjson refuses.

orjson cannot write integers beyond 64 bits or values nested deeper than 254 levels; JSON (and
the agents that wrote the file) allow both, so such a value is written as the file had it.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

import orjson

from memtui.errors import MemtuiError

# deep enough for anything orjson reads (it refuses more than 1024 levels)
_RECURSION_FOR_DEEP_VALUES = 20_000


class UnwritableError(MemtuiError):
    """A value no JSON writer here can write (nesting beyond Python's limits)."""


def dumps(value: Any, *, indent: bool = False) -> bytes:
    """Compact JSON (orjson's layout), or 2-space indented JSON as JavaScript writes it."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 if indent else 0)
    except orjson.JSONEncodeError:
        pass
    return dumps_text(value, indent=indent).encode("utf-8")


class NotOrjson(Exception):
    """A part orjson cannot write: what it is part of is written whole by `dumps` (the
    standard library's numbers are not orjson's, so one text never mixes the two)."""


def strict_dumps(value: Any) -> bytes:
    """`dumps` where orjson writes `value`; else NotOrjson."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        raise NotOrjson from None


def dumps_in_parts(
    value: dict[str, Any], key: str, rows: Iterable[Any], *, pairs: bool = False, size: int = 5000
) -> Iterator[bytes]:
    """`dumps(value)` a part at a time, with `value[key]` written from `rows`, `size` rows a
    part: a list of the rows, or (`pairs`) an object of the rows as (key, value) pairs.
    NotOrjson where orjson cannot write a part."""
    dumps = strict_dumps
    keys = list(value)
    at = keys.index(key)
    rest = {k: value[k] for k in keys[at + 1 :]}
    opening, closing = (b"{", b"}") if pairs else (b"[", b"]")
    yield (dumps({k: value[k] for k in keys[:at]})[:-1] + b"," if at else b"{") + dumps(key)
    yield b":" + opening
    rows = iter(rows)
    first = True
    while part := (dict if pairs else list)(islice(rows, size)):
        yield dumps(part)[1:-1] if first else b"," + dumps(part)[1:-1]
        first = False
    yield closing + (b"," + dumps(rest)[1:] if rest else b"}")


def dumps_text(value: Any, *, indent: bool = False, spaced: bool = False) -> str:
    """The standard library's JSON, in orjson's layout (`spaced`: Python's own `", "` and
    `": "`), for values of any depth and size."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, _RECURSION_FOR_DEEP_VALUES))
    try:
        text = json.dumps(
            value,
            ensure_ascii=False,
            allow_nan=False,
            indent=2 if indent else None,
            separators=(",", ": ") if indent else (", ", ": ") if spaced else (",", ":"),
        )
    except (RecursionError, ValueError, TypeError) as e:
        raise UnwritableError(f"a value cannot be written as JSON ({e})") from None
    finally:
        sys.setrecursionlimit(limit)
    # a lone UTF-16 surrogate (pi's cut emoji) has no UTF-8 form: written as its escape
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
