"""Recognise a store's format from its content (never from its name) and parse it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from memtui.errors import StoreFormatError
from memtui.gcpause import gc_paused
from memtui.stores.document import Document, StoreFormat
from memtui.stores.longterm_format import LongtermFormat
from memtui.stores.native_format import NativeFormat, is_native
from memtui.stores.pi_format import PiFormat
from memtui.stores.pi_json import PiJsonError
from memtui.stores.pi_json import loads as pi_loads

FORMATS: dict[str, StoreFormat] = {
    "native": NativeFormat(),
    "pi": PiFormat(),
    "longterm": LongtermFormat(),
}


def parse_store(data: bytes, path: Path) -> tuple[StoreFormat, Document]:
    """The store's format and its parsed document, or a one-line StoreFormatError."""
    # Parsing makes millions of small objects, none of them cyclic: the cyclic collector
    # would walk them again and again (it doubles the load time of a 100k-entry store).
    with gc_paused():
        parsed = _parse_store(data, path)
        parsed[1].header["layout_bytes"] = _layout(data)
    return parsed


def _parse_store(data: bytes, path: Path) -> tuple[StoreFormat, Document]:
    if not data.strip():
        raise StoreFormatError(f"{path}: the file is empty, not a memory store")
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        as_pi = _pi_value(data)  # pi's JSON.parse allows lone surrogates and huge numbers
        if as_pi is not None:
            return FORMATS["pi"], FORMATS["pi"].parse(as_pi, path)
        lines = _json_lines(data, path)
        if lines is None:
            raise StoreFormatError(f"{path}: {_json_problem(data, e)}") from None
        doc = FORMATS["longterm"].parse(([r for r, _ in lines], "jsonl"), path)
        doc.header["lines"] = dict(zip(doc.memories, lines, strict=True))
        return FORMATS["longterm"], doc
    if isinstance(value, dict):
        if is_native(value):
            return FORMATS["native"], FORMATS["native"].parse(value, path)
        if "memories" in value:
            return FORMATS["pi"], FORMATS["pi"].parse(value, path)
        if "content" in value and ("id" in value or "memory_id" in value):
            doc = FORMATS["longterm"].parse(([value], "jsonl"), path)
            doc.header["lines"] = dict(zip(doc.memories, [(value, data.strip())], strict=True))
            return FORMATS["longterm"], doc
        raise StoreFormatError(
            f"{path}: not a memory store (a JSON object without 'memories'; "
            "expected a pi, longterm or memtui store)"
        )
    if isinstance(value, list):
        doc = FORMATS["longterm"].parse((value, "array"), path)
        doc.header["indent"] = b"\n " in data[:4096]
        return FORMATS["longterm"], doc
    raise StoreFormatError(f"{path}: not a memory store (the JSON value is not an object or list)")


def _pi_value(data: bytes) -> dict[str, Any] | None:
    try:
        value = pi_loads(data)
    except PiJsonError:
        return None
    return value if isinstance(value, dict) and isinstance(value.get("memories"), list) else None


def _layout(data: bytes) -> tuple[bool, bytes]:
    """How the file ends its lines (CRLF or not) and what follows its last value."""
    head = data[:65536]
    crlf = head.count(b"\r\n") * 2 > head.count(b"\n")
    return crlf, data[len(data.rstrip(b" \t\r\n")) :]


def with_layout(rendered: bytes, layout: tuple[bool, bytes] | None) -> bytes:
    """`rendered` with the line endings and the end of the file it replaces."""
    if layout is None:
        return rendered
    crlf, tail = layout
    out = rendered.rstrip(b" \t\r\n")
    if crlf:
        out = out.replace(b"\n", b"\r\n")  # JSON text holds no raw line feed inside a string
    return out + tail


def _json_lines(data: bytes, path: Path) -> list[tuple[Any, bytes]] | None:
    """Records of a JSON Lines file with their lines, or None when it is not JSON Lines (its
    first record is not a JSON object, or there is only one line)."""
    records: list[tuple[Any, bytes]] = []
    loads = orjson.loads
    gap = b""  # blank lines before a record stay with it
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line or line.isspace():
            gap += line.rstrip(b"\r") + b"\n"
            continue
        try:
            records.append((loads(line), gap + line.rstrip(b"\r")))
            gap = b""
        except orjson.JSONDecodeError as e:
            if not records:
                return None
            problem = _json_problem(line, e).replace(f"at line {e.lineno}, column", "at column")
            raise StoreFormatError(f"{path}: line {number}: {problem}") from None
        if len(records) == 1 and type(records[0][0]) is not dict:
            return None
    return records if len(records) >= 2 else None


def _json_problem(data: bytes, error: orjson.JSONDecodeError) -> str:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as u:
        return f"not valid UTF-8 (byte offset {u.start})"
    message = str(error).split(": line ")[0]
    return f"not valid JSON ({message} at line {error.lineno}, column {error.colno})"
