"""JSON as pi's Node.js reads and writes it: `JSON.parse` and `JSON.stringify(v, null, 2)`.

What differs from Python's (and orjson's) JSON: every number is a double, spelled as
JavaScript's `Number.prototype.toString` spells it (`1`, `1e-7`, `1e+21`); a lone UTF-16
surrogate is a valid string character (written `\\ud83d`); `NaN`/`Infinity` tokens and a byte
order mark are refused; an object's integer-like keys come first, in numeric order.
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any

import orjson

from memtui.jsonout import read_number

_MAX_SAFE = 2**53
_ARRAY_INDEX_LIMIT = 2**32 - 1
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r"}
_ESCAPES["\t"] = "\\t"
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f\ud800-\udfff]')


class PiJsonError(ValueError):
    """The text is not JSON as `JSON.parse` reads it."""


def _refuse_constant(token: str) -> Any:
    raise PiJsonError(f"{token} is not JSON")


def _number(text: str) -> int | float:
    if text.lstrip("-").isdigit():
        value = int(text)
        return value if -_MAX_SAFE <= value <= _MAX_SAFE else float(text)
    return float(text)


def _is_index(key: str) -> bool:
    """Whether JavaScript treats `key` as an array index (it then orders it first)."""
    if not (key.isdigit() and key.isascii()):
        return False
    return str(int(key)) == key and int(key) < _ARRAY_INDEX_LIMIT


def js_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)  # a repeated key keeps its first place and its last value, as in JS
    if any(_is_index(k) for k in out):
        indexes = sorted((k for k in out if _is_index(k)), key=int)
        out = {**{k: out[k] for k in indexes}, **{k: v for k, v in out.items() if not _is_index(k)}}
    return out


def loads(data: bytes) -> Any:
    """The value `JSON.parse` reads from the file; PiJsonError if none. Bytes that are not
    UTF-8 are refused (Node would read them as U+FFFD and so change the entry on its next
    write; memtui changes nothing it was not asked to)."""
    text = _text(data)
    try:
        return json.loads(
            text,
            object_pairs_hook=js_object,
            parse_int=_number,
            parse_float=float,
            parse_constant=_refuse_constant,
        )
    except (json.JSONDecodeError, RecursionError) as e:
        raise PiJsonError(str(e)) from None


# orjson's limits, which the checked reader keeps: integers within 64 bits keep their digits
# (longer ones are read as doubles), and values nest at most 1024 levels deep
_INT_RANGE = range(-(2**63), 2**64)
MAX_DEPTH = 1024


def read(data: bytes) -> Any:
    """What memtui reads from a pi store: orjson's value, or (for what orjson refuses but
    `JSON.parse` reads: a lone surrogate, a number beyond a double's range) `read_checked`'s.
    The two agree wherever both read (tests/test_pi_decoders.py). A number beyond a double's
    range is ±inf with its text kept (`jsonout.NumberText`)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return read_checked(data)


def read_checked(data: bytes) -> Any:
    """`data` read as `JSON.parse` reads it but for orjson's limits (see `_INT_RANGE`): the
    value a store of pi's shows memtui; PiJsonError if none. Keys stay in the file's order
    (the writer puts them in JavaScript's)."""
    text = _text(data)
    try:
        value = json.loads(
            text, parse_int=_int, parse_float=read_number, parse_constant=_refuse_constant
        )
    except RecursionError:
        value = _deep(text)
    except json.JSONDecodeError as e:
        raise PiJsonError(str(e)) from None
    return value


def _int(text: str) -> int | float:
    value = int(text)
    return value if value in _INT_RANGE else float(text)


def _deep(text: str) -> Any:
    """A value nested deeper than Python's recursion limit lets json read: read with room
    for MAX_DEPTH levels, refused beyond them."""
    limit = sys.getrecursionlimit()  # raised for this one read only
    sys.setrecursionlimit(limit + 2 * MAX_DEPTH)
    try:
        value = json.loads(
            text, parse_int=_int, parse_float=read_number, parse_constant=_refuse_constant
        )
    except (json.JSONDecodeError, RecursionError) as e:
        raise PiJsonError(str(e)) from None
    finally:
        sys.setrecursionlimit(limit)
    if _depth(value) > MAX_DEPTH:
        raise PiJsonError(f"nested deeper than {MAX_DEPTH} levels")
    return value


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            stack.extend(
                (v, level + 1) for v in (item.values() if isinstance(item, dict) else item)
            )
    return deepest


def _text(data: bytes) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise PiJsonError(f"not valid UTF-8 ({e.reason})") from None
    if text.startswith("\ufeff"):
        raise PiJsonError("a byte order mark before the JSON value")
    return text


def js_keys_in_order(value: Any) -> Any:
    """`value` (parsed elsewhere) with every object's keys in JavaScript's order."""
    if isinstance(value, dict):
        return js_object([(k, js_keys_in_order(v)) for k, v in value.items()])
    if isinstance(value, list):
        return [js_keys_in_order(v) for v in value]
    return value


def number_text(value: float) -> str:
    """`String(value)` in JavaScript (shortest round-trip digits, JS's exponent rules)."""
    if not math.isfinite(value):
        return "null"  # JSON.stringify writes NaN and ±Infinity as null
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exp = repr(abs(float(value))).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    point = len(whole) + (int(exp) if exp else 0) - (len(whole + frac) - len(digits))
    digits = digits.rstrip("0")
    k, n = len(digits), point
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = f"{digits[:n]}.{digits[n:]}"
    elif -6 < n <= 0:
        text = "0." + "0" * -n + digits
    else:
        e = n - 1
        head = digits if k == 1 else f"{digits[0]}.{digits[1:]}"
        text = f"{head}e{'+' if e > 0 else '-'}{abs(e)}"
    return sign + text


def _string(text: str) -> str:
    if not _NEEDS_ESCAPE.search(text):
        return f'"{text}"'
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    return _ESCAPES.get(ch) or f"\\u{ord(ch):04x}"


def _write(value: Any, indent: str | None, out: list[str], unit: str = "  ") -> None:
    """`value` into `out`, indented from `indent` (None: on one line, as without a space
    argument)."""
    if isinstance(value, str):
        out.append(_string(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        # an integer beyond 2^53 comes only from the file (pi's own reads make it a double):
        # its digits are written as the file had them
        out.append(str(value))
    elif isinstance(value, float):
        out.append(number_text(value))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = None if indent is None else indent + unit
        out.append("{")
        first = True
        for key, item in js_object(list(value.items())).items():
            if inner is None:
                out.append(("" if first else ",") + _string(str(key)) + ":")
            else:
                out.append(("\n" if first else ",\n") + inner + _string(str(key)) + ": ")
            _write(item, inner, out, unit)
            first = False
        out.append("}" if indent is None else "\n" + indent + "}")
    elif isinstance(value, list | tuple):
        if not value:
            out.append("[]")
            return
        inner = None if indent is None else indent + unit
        out.append("[")
        for n, item in enumerate(value):
            if inner is None:
                out.append("" if n == 0 else ",")
            else:
                out.append(("\n" if n == 0 else ",\n") + inner)
            _write(item, inner, out, unit)
        out.append("]" if indent is None else "\n" + indent + "]")
    else:
        raise TypeError(f"{type(value).__name__} is not JSON")


def dumps(value: Any, *, compact: bool = False, unit: str = "  ") -> bytes:
    """`JSON.stringify(value, null, 2)` as UTF-8 bytes (no trailing newline); `compact`:
    `JSON.stringify(value)`; `unit`: another indentation (`JSON.stringify(value, null, unit)`)."""
    out: list[str] = []
    _write(value, None if compact else "", out, unit)
    return "".join(out).encode("utf-8")
