"""Recognise a store's format from its content (never from its name) and parse it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import orjson

from memtui.errors import StoreFormatError
from memtui.gcpause import gc_paused
from memtui.stores.formats.document import Document, StoreFormat
from memtui.stores.formats.fields import json_problem
from memtui.stores.formats.registry import FORMATS


def parse_store(data: bytes, path: Path) -> tuple[StoreFormat, Document]:
    """The store's format and its parsed document, or a one-line StoreFormatError."""
    # Parsing makes millions of small objects, none of them cyclic: the cyclic collector
    # would walk them again and again (it doubles the load time of a 100k-entry store).
    with gc_paused():
        parsed = _parse_store(data, path)
        # a format that writes its own layout sets it (None) itself
        parsed[1].header.setdefault("layout_bytes", _layout(data))
    return parsed


def _parse_store(data: bytes, path: Path) -> tuple[StoreFormat, Document]:
    if not data or data.isspace():  # (`strip` would copy a 360 MB file to say so)
        for fmt in FORMATS.values():  # Hermes leaves a 0-byte file when it is emptied
            doc = fmt.recognise_text(data, path)
            if doc is not None:
                return fmt, doc
        raise StoreFormatError(f"{path}: the file is empty, not a memory store")
    for fmt in FORMATS.values():
        doc = fmt.recognise_bytes(data, path)
        if doc is not None:
            return fmt, doc
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        for fmt in FORMATS.values():
            doc = fmt.recognise_text(data, path)
            if doc is not None:
                return fmt, doc
        raise StoreFormatError(f"{path}: {json_problem(data, e)}") from None
    for fmt in FORMATS.values():
        doc = fmt.recognise(value, data, path)
        if doc is not None:
            return fmt, doc
    if isinstance(value, dict):
        raise StoreFormatError(
            f"{path}: not a memory store (a JSON object without 'memories'; "
            "expected a pi, longterm or memtui store)"
        )
    raise StoreFormatError(f"{path}: not a memory store (the JSON value is not an object or list)")


def _layout(data: bytes) -> tuple[bool, bytes]:
    """How the file ends its lines (CRLF or not) and what follows its last value."""
    head = data[:65536]
    crlf = head.count(b"\r\n") * 2 > head.count(b"\n")
    end = len(data)
    while end and data[end - 1] in b" \t\r\n":  # (not `rstrip`: a copy of the whole file)
        end -= 1
    return crlf, data[end:]


def with_layout(rendered: bytes, layout: tuple[bool, bytes] | None) -> bytes:
    """`rendered` with the line endings and the end of the file it replaces."""
    if layout is None:
        return rendered
    crlf, tail = layout
    end = len(rendered)
    while end and rendered[end - 1] in b" \t\r\n":
        end -= 1
    if not crlf:  # one copy at most (a store file can be hundreds of MB)
        return rendered if rendered[end:] == tail else b"".join((memoryview(rendered)[:end], tail))
    out = rendered[:end].replace(b"\n", b"\r\n")  # JSON text holds no raw line feed in a string
    return out + tail


def layout_parts(parts: Iterable[bytes], layout: tuple[bool, bytes] | None) -> Iterator[bytes]:
    """`with_layout` of the pieces' bytes, a piece at a time."""
    if layout is None:
        yield from parts
        return
    crlf, tail = layout
    held = b""  # blanks at the end of the pieces so far: the file's end, unless more follows
    for part in parts:
        body = part.rstrip(b" \t\r\n")
        if not body:
            held += part
            continue
        chunk = held + body
        yield chunk.replace(b"\n", b"\r\n") if crlf else chunk
        held = part[len(body) :]
    yield tail
