"""Writing a pi store laid out by hand (another indentation, `1.0`, `\\u00e9`, one line): the
entries and top-level values memtui did not change keep the file's own bytes; what it changed
is written as pi writes it, at the file's indentation. pi itself rewrites the whole file in its
own layout at its next write; until then a diff shows only memtui's change."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from memtui.stores.formats.pi_json import PiJsonError, dumps, read

_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},:]')
_WS = b" \t\n\r"


@dataclass(frozen=True, slots=True)
class _Part:
    """A member of the top object or an element of `memories`: the white space before it,
    its text up to the value (a member's key and colon), its value's span and the value."""

    lead: bytes
    head: bytes
    start: int
    end: int
    value: Any


@dataclass(frozen=True, slots=True)
class _Shape:
    members: dict[str, _Part]
    items: list[_Part]
    top_tail: bytes  # white space before the top object's `}`
    items_tail: bytes  # white space before `memories`' `]`


def in_pi_layout(source: bytes) -> bool:
    """Whether `source` is exactly what pi writes for the value it holds."""
    try:
        return dumps(read(source)) == source.rstrip(_WS)
    except PiJsonError:
        return False


def spliced(
    source: bytes,
    top: dict[str, Any],
    records: list[Any],
    full: bytes,
    earlier: Sequence[bytes] = (),
) -> bytes | None:
    """The file `source` with its top-level values and entries made `top` and `records`,
    keeping the bytes of what did not change (an entry that comes back: its bytes in an
    `earlier` file that held it); None when the file's shape is not one this follows, or the
    result would not read as `full` (pi's own layout of the same) does."""
    shape = _shape_of(source)
    if shape is None:
        return None
    by_id: dict[Any, _Part] = {}
    for part in shape.items:
        by_id.setdefault(_key(part.value), part)
    held: dict[Any, bytes] = {}  # entries as an earlier file held them
    for old in earlier:
        old_shape = _shape_of(old)
        for part in old_shape.items if old_shape is not None else ():
            held.setdefault((_key(part.value), _text(part.value)), old[part.start : part.end])
    members = list(shape.members.values())
    top_lead = members[0].lead if members else b"\n  "
    unit = _unit(top_lead)
    item_lead = shape.items[0].lead if shape.items else top_lead + top_lead.lstrip(b"\n")
    out_items = []
    for record in records:
        found = by_id.get(_key(record))
        lead = found.lead if found is not None else item_lead
        if found is not None and found.value == record:
            out_items.append(lead + source[found.start : found.end])
            continue
        back = held.get((_key(record), _text(record))) if held else None
        out_items.append(lead + (back if back is not None else _render(record, lead, unit)))
    items_tail = shape.items_tail if shape.items else top_lead.rstrip(b" ")
    array = b"[" + b",".join(out_items) + items_tail + b"]" if out_items else b"[]"

    out_members = []
    for key, part in shape.members.items():
        if key not in top:
            continue
        if key == "memories":
            new = array
        elif part.value == top[key]:
            new = source[part.start : part.end]
        else:
            new = _render(top[key], part.lead, unit)
        out_members.append(part.lead + part.head + new)
    for key in top:
        if key not in shape.members:
            colon = b": " if b"\n" in top_lead else b":"
            new = array if key == "memories" else _render(top[key], top_lead, unit)
            out_members.append(top_lead + dumps(key) + colon + new)
    text = b"{" + b",".join(out_members) + shape.top_tail + b"}"
    try:
        same = dumps(read(text)) == full
    except PiJsonError:
        same = False
    return text if same else None


def _unit(lead: bytes) -> str:
    """The file's indentation step: what comes before a top-level key on its line."""
    step = lead[lead.rfind(b"\n") + 1 :].decode("ascii", "replace")
    return step if step and not step.strip(" \t") else "  "


def _shape_of(source: bytes) -> _Shape | None:
    try:
        value = read(source)
    except PiJsonError:
        return None
    return _shape(source, value)


def _text(value: Any) -> bytes:
    """How pi writes `value`: the same text is the same value to pi."""
    return dumps(value)


def _key(record: Any) -> Any:
    ident = record.get("id") if isinstance(record, dict) else None
    return ident if isinstance(ident, str) and ident else ("at", id(record))


def _render(value: Any, lead: bytes, unit: str) -> bytes:
    """`value` as pi writes it, indented by `unit` from where the white space `lead` before
    it leaves off (on one line when the file has its values on one line)."""
    if b"\n" not in lead:
        return dumps(value, compact=True)
    indent = lead[lead.rindex(b"\n") + 1 :]
    return dumps(value, unit=unit).replace(b"\n", b"\n" + indent)


def _shape(source: bytes, value: Any) -> _Shape | None:
    """Where the top object's members and `memories`' elements are in `source`."""
    if not isinstance(value, dict) or not isinstance(value.get("memories"), list):
        return None
    depth = 0
    top_open = top_close = mem_open = mem_close = -1
    top_seps: list[int] = []
    mem_seps: list[int] = []
    colons: dict[int, str] = {}  # position of a top-level colon → its key
    last_key = b""
    for match in _TOKEN.finditer(source):
        at, token = match.start(), match.group()
        first = token[0]
        if first == 0x22:  # a string
            if depth == 1:
                last_key = token
        elif first in b"{[":
            if depth == 0:
                top_open = at
            elif depth == 1 and first == 0x5B and colons and _is_memories(source, colons, at):
                mem_open = at
            depth += 1
        elif first in b"}]":
            depth -= 1
            if depth == 0:
                top_close = at
                break
            if depth == 1 and mem_open >= 0 and mem_close < 0 and first == 0x5D:
                mem_close = at
        elif first == 0x2C:  # ,
            if depth == 1:
                top_seps.append(at)
            elif depth == 2 and mem_open >= 0 and mem_close < 0:
                mem_seps.append(at)
        elif depth == 1:  # :
            colons[at] = _decode_key(last_key)
    if top_open < 0 or top_close < 0 or mem_open < 0 or mem_close < 0:
        return None
    keys = list(colons.values())
    if len(set(keys)) != len(keys) or keys != list(value):
        return None  # a key given twice: pi keeps its first place and its last value
    members: dict[str, _Part] = {}
    bounds = [top_open, *top_seps, top_close]
    colon_at = list(colons)
    if len(colon_at) != len(bounds) - 1:
        return None
    for (a, b), colon, key in zip(pairwise(bounds), colon_at, keys, strict=True):
        start = _skip_ws(source, a + 1)
        value_start = _skip_ws(source, colon + 1)
        end = _back_ws(source, b)
        members[key] = _Part(
            source[a + 1 : start], source[start:value_start], value_start, end, value[key]
        )
    items: list[_Part] = []
    records = value["memories"]
    inside = source[mem_open + 1 : mem_close]
    if inside.strip(_WS):
        bounds = [mem_open, *mem_seps, mem_close]
        if len(bounds) - 1 != len(records):
            return None
        for (a, b), record in zip(pairwise(bounds), records, strict=True):
            start, end = _skip_ws(source, a + 1), _back_ws(source, b)
            items.append(_Part(source[a + 1 : start], b"", start, end, record))
    elif records:
        return None
    top_tail = source[_back_ws(source, top_close) : top_close]
    items_tail = source[_back_ws(source, mem_close) : mem_close]
    return _Shape(members, items, top_tail, items_tail)


def _is_memories(source: bytes, colons: dict[int, str], at: int) -> bool:
    colon = next(reversed(colons))
    return colons[colon] == "memories" and not source[colon + 1 : at].strip(_WS)


def _decode_key(token: bytes) -> str:
    try:
        key = read(token)
    except PiJsonError:
        return ""
    return key if isinstance(key, str) else ""


def _skip_ws(source: bytes, at: int) -> int:
    while at < len(source) and source[at] in _WS:
        at += 1
    return at


def _back_ws(source: bytes, at: int) -> int:
    while at > 0 and source[at - 1] in _WS:
        at -= 1
    return at
