"""JSON out: orjson, and the standard library in the same layout for what orjson refuses.

orjson cannot write integers beyond 64 bits or values nested deeper than 254 levels; JSON (and
the agents that wrote the file) allow both, so such a value is written as the file had it.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import sys
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

import orjson

from memtui.errors import MemtuiError

# deep enough for anything orjson reads (it refuses more than 1024 levels)
_RECURSION_FOR_DEEP_VALUES = 20_000


class NumberText(float):
    """A number beyond a double's range (`1e400`): ±inf to arithmetic, written back as the file
    spelled it (orjson would write null, the standard library `Infinity`)."""

    __slots__ = ("text",)
    text: str

    def __new__(cls, text: str) -> NumberText:
        out = super().__new__(cls, text)
        out.text = text
        return out


def read_number(text: str) -> float:
    """A JSON number with a fraction or exponent (the standard library's `parse_float`)."""
    value = float(text)
    return value if math.isfinite(value) else NumberText(text)


def literal(value: Any) -> Any:
    """orjson's `default`: a NumberText as its text."""
    if isinstance(value, NumberText):
        return orjson.Fragment(value.text.encode("ascii"))
    raise TypeError


class UnwritableError(MemtuiError):
    """A value no JSON writer here can write (nesting beyond Python's limits)."""


def dumps(value: Any, *, indent: bool = False) -> bytes:
    """Compact JSON (orjson's layout), or 2-space indented JSON as JavaScript writes it."""
    try:
        return orjson.dumps(value, literal, option=orjson.OPT_INDENT_2 if indent else 0)
    except orjson.JSONEncodeError:
        pass
    return dumps_text(value, indent=indent).encode("utf-8")


class NotOrjson(Exception):
    """A part orjson cannot write: what it is part of is written whole by `dumps` (the
    standard library's numbers are not orjson's, so one text never mixes the two)."""


def strict_dumps(value: Any, depth: int = 0) -> bytes:
    """`dumps` where orjson writes `value` `depth` containers deep (as it would within the
    whole it is part of: orjson refuses more than 254 levels); else NotOrjson."""
    try:
        if not depth:
            return orjson.dumps(value, literal)
        for _ in range(depth):
            value = [value]
        return orjson.dumps(value, literal)[depth:-depth]
    except orjson.JSONEncodeError:
        raise NotOrjson from None


def dumps_in_parts(
    value: dict[str, Any],
    key: str,
    rows: Iterable[Any],
    *,
    pairs: bool = False,
    size: int = 5000,
    depth: int = 0,
) -> Iterator[bytes]:
    """`dumps(value)` a part at a time, with `value[key]` written from `rows`, `size` rows a
    part: a list of the rows, or (`pairs`) an object of the rows as (key, value) pairs.
    NotOrjson where orjson cannot write a part (`depth`: the containers around `value`)."""
    return dumps_around(
        value, key, _texts(iter(rows), pairs, size, depth + 1), pairs=pairs, depth=depth
    )


def _texts(rows: Iterator[Any], pairs: bool, size: int, depth: int) -> Iterator[bytes]:
    while part := (dict if pairs else list)(islice(rows, size)):
        yield rows_text(part, depth)


def rows_text(part: list[Any] | dict[str, Any], depth: int) -> bytes:
    """A part's rows as they stand within their list or object (`dumps_around`'s texts),
    `depth` containers deep; NotOrjson where orjson cannot write them."""
    return strict_dumps(part, depth)[1:-1]


def dumps_around(
    value: dict[str, Any],
    key: str,
    texts: Iterable[bytes],
    *,
    pairs: bool = False,
    depth: int = 0,
) -> Iterator[bytes]:
    """`dumps_in_parts` with the rows' parts written already (`rows_text`)."""
    keys = list(value)
    at = keys.index(key)
    rest = {k: value[k] for k in keys[at + 1 :]}
    opening, closing = (b"{", b"}") if pairs else (b"[", b"]")
    head = strict_dumps({k: value[k] for k in keys[:at]}, depth)[:-1] + b"," if at else b"{"
    yield head + strict_dumps(key) + b":" + opening
    first = True
    for text in texts:
        yield text if first else b"," + text
        first = False
    yield closing + (b"," + strict_dumps(rest, depth)[1:] if rest else b"}")


def loads(data: bytes) -> Any:
    """JSON as orjson reads it, else as the standard library does (a lone UTF-16 surrogate's
    escape: pi cuts text at 500 units); orjson.JSONDecodeError where neither reads it."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        try:
            with deep_values():
                return json.loads(data.decode("utf-8", "surrogatepass"), parse_float=read_number)
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise orjson.JSONDecodeError("not JSON", data.decode("utf-8", "replace"), 0) from None


@contextlib.contextmanager
def deep_values() -> Iterator[None]:
    """Room for the standard library's JSON to recurse through values of any depth."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, _RECURSION_FOR_DEEP_VALUES))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def dumps_text(value: Any, *, indent: bool = False, spaced: bool = False) -> str:
    """The standard library's JSON, in orjson's layout (`spaced`: Python's own `", "` and
    `": "`), for values of any depth and size."""
    try:
        text = _stdlib_dumps(value, indent, spaced)
    except ValueError:  # out of range: a NumberText, written as its text
        text = _with_number_texts(value, indent, spaced)
    # a lone UTF-16 surrogate (pi's cut emoji) has no UTF-8 form: written as its escape
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _stdlib_dumps(value: Any, indent: bool, spaced: bool) -> str:
    try:
        with deep_values():
            return json.dumps(
                value,
                ensure_ascii=False,
                allow_nan=False,
                indent=2 if indent else None,
                separators=(",", ": ") if indent else (", ", ": ") if spaced else (",", ":"),
            )
    except ValueError as e:
        if "Out of range float" in str(e):
            raise
        raise UnwritableError(f"a value cannot be written as JSON ({e})") from None
    except (RecursionError, TypeError) as e:
        raise UnwritableError(f"a value cannot be written as JSON ({e})") from None


# the standard library writes no number as its text: each NumberText is written as one of
# these (digits no double has) and its text put in their place
_STAND_IN = 7_310_000_000_000_000_000_000_000_000_000_000_000_000


def _with_number_texts(value: Any, indent: bool, spaced: bool) -> str:
    texts: list[str] = []

    def stand_in(item: Any) -> Any:
        if isinstance(item, NumberText):
            texts.append(item.text)
            return _STAND_IN + len(texts) - 1
        if isinstance(item, float) and not math.isfinite(item):
            raise UnwritableError(f"a value cannot be written as JSON ({item})")
        if isinstance(item, dict):
            return {k: stand_in(v) for k, v in item.items()}
        if isinstance(item, list | tuple):
            return [stand_in(v) for v in item]
        return item

    with deep_values():
        text = _stdlib_dumps(stand_in(value), indent, spaced)
    for n, number in enumerate(texts):
        digits = str(_STAND_IN + n)
        if text.count(digits) != 1:
            raise UnwritableError(f"a value cannot be written as JSON (the number {number})")
        text = text.replace(digits, number)
    return text


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
