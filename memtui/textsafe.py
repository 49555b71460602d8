"""Memory text is data: make it safe to put on a terminal, shown literally.

Control characters (C0, DEL, C1: the start of every escape sequence), bidirectional overrides
and invisible zero-width characters become visible `\\x1b`-style escapes; nothing is dropped.
"""

from __future__ import annotations

import os
import re

_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 (but tab and newline), DEL, C1
    "\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]"
)
_UNSAFE_ONE_LINE = re.compile(_UNSAFE.pattern[:-1] + "\t\n]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code == 0x0A:
        return "⏎"
    if code == 0x09:
        return "→"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def literal(text: str) -> str:
    """Text that prints as itself: escapes for anything a terminal would interpret or hide;
    newlines and tabs kept (for wrapped views)."""
    return _UNSAFE.sub(_escape, text)


def one_line(text: str) -> str:
    """`literal`, with newlines shown as ⏎ and tabs as →, for table cells and lists."""
    return _UNSAFE_ONE_LINE.sub(_escape, text)


_JSON_UNSAFE = re.compile(
    "[\x7f-\x9f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff]"
)


def json_safe(text: str) -> str:
    """JSON text with the characters the JSON encoder leaves raw but terminals interpret
    written as \\u escapes (still the same JSON value)."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogates(text: str) -> bool:
    """Whether `text` holds a lone UTF-16 surrogate: no UTF-8 text does (bytes a non-UTF-8
    locale could not decode arrive as such)."""
    return _SURROGATE.search(text) is not None


def redecoded(text: str) -> str | None:
    """Command-line text a non-UTF-8 locale decoded to surrogate escapes, decoded again as
    the UTF-8 it is; None when its bytes are not UTF-8."""
    if not has_surrogates(text):
        return text
    try:
        return os.fsencode(text).decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return None
