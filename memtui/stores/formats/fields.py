"""Type checks for fields read from a store file, with errors that name the file and entry."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn

import orjson

from memtui.errors import StoreFormatError
from memtui.times import TimeRangeError, from_epoch_ms, parse_iso

# A memory is a fact or a note; a content this long is a corrupted or hostile file.
MAX_CONTENT_CHARS = 1_000_000

_TYPE_NAMES = {
    str: "a string",
    bool: "true or false",
    list: "a list",
    dict: "an object",
    type(None): "null",
}


def json_type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    return _TYPE_NAMES.get(type(value), type(value).__name__)


class EntryReader:
    """Reads typed fields from one record; every error says where it was."""

    __slots__ = ("path", "record", "where")

    def __init__(self, path: Path, where: str, record: Any) -> None:
        self.path = path
        self.where = where
        if not isinstance(record, dict):
            self.fail(f"is {json_type_name(record)}, expected an object")
        self.record: dict[str, Any] = record

    def fail(self, problem: str) -> NoReturn:
        raise StoreFormatError(f"{self.path}: {self.where} {problem}")

    def wrong(self, key: str, expected: str) -> NoReturn:
        got = json_type_name(self.record[key])
        self.fail(f"field {key!r} must be {expected}, got {got}")

    def content(self, key: str = "content") -> str:
        value: object = self.record.get(key)
        if not isinstance(value, str):
            if key not in self.record:
                self.fail(f"has no {key!r}")
            self.wrong(key, "a string")
        if len(value) > MAX_CONTENT_CHARS:
            self.fail(
                f"field {key!r} is {len(value):,} characters long "
                f"(memtui's limit is {MAX_CONTENT_CHARS:,}); the file looks corrupted"
            )
        return value

    def opt_str(self, key: str) -> str | None:
        value: object = self.record.get(key)
        if value is None or isinstance(value, str):
            return value
        self.wrong(key, "a string")
        return None

    def number(self, key: str, default: float) -> float:
        value: object = self.record.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.wrong(key, "a number")
        if not math.isfinite(value):
            self.fail(f"field {key!r} is not a finite number")
        return float(value)

    def opt_int(self, key: str) -> int | None:
        value: object = self.record.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.wrong(key, "a whole number")
        if isinstance(value, float):
            if not value.is_integer():
                self.wrong(key, "a whole number")
            return int(value)
        return value

    def flag(self, key: str) -> bool:
        value: object = self.record.get(key)
        if value is None:
            return False
        if not isinstance(value, bool):
            self.wrong(key, "true or false")
        return value

    def str_list(self, key: str) -> tuple[str, ...]:
        value: object = self.record.get(key)
        if value is None:
            return ()
        if not isinstance(value, list):
            self.wrong(key, "a list of strings")
        for item in value:
            if not isinstance(item, str):
                self.fail(f"field {key!r} must hold only strings, found {json_type_name(item)}")
        return tuple(value)

    def id_list(self, key: str) -> tuple[str, ...]:
        value: object = self.record.get(key)
        if value is None:
            return ()
        if not isinstance(value, list):
            self.wrong(key, "a list of ids")
        out = []
        for item in value:
            if isinstance(item, bool) or not isinstance(item, int | str):
                self.fail(f"field {key!r} must hold ids, found {json_type_name(item)}")
            out.append(str(item))
        return tuple(out)

    def vector(self, key: str) -> tuple[float, ...] | None:
        value: object = self.record.get(key)
        if value is None:
            return None
        if not isinstance(value, list):
            self.wrong(key, "a list of numbers")
        for item in value:
            if isinstance(item, bool) or not isinstance(item, int | float):
                self.fail(f"field {key!r} must hold only numbers, found {json_type_name(item)}")
        return tuple(float(x) for x in value)

    def iso_time(self, key: str) -> datetime | None:
        value: object = self.record.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            self.wrong(key, "an RFC 3339 time string")
        try:
            return parse_iso(value)
        except TimeRangeError:
            self.fail(f"field {key!r} is a time memtui cannot hold: {value[:40]!r} (years 1-9999)")
        except ValueError:
            self.fail(f"field {key!r} is not an RFC 3339 time: {value[:40]!r}")
        return None

    def epoch_ms(self, key: str) -> datetime | None:
        value: object = self.record.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.wrong(key, "a time in epoch milliseconds")
        try:
            return from_epoch_ms(value)
        except (OverflowError, ValueError):
            self.fail(f"field {key!r} is not a valid time: {value!r}")
        return None


_NONE = type(None)
OPT_STR = (str, _NONE)
OPT_NUM = (int, float, _NONE)
OPT_INT = (int, _NONE)
OPT_LIST = (list, _NONE)
OPT_BOOL = (bool, _NONE)
OPT_DICT = (dict, _NONE)
NUMBERS = (int, float)

Share = Callable[[str, str], str]
"""The `setdefault` of one read's strings: the first of equal strings, for every later one."""


def new_share() -> Share:
    strings: dict[str, str] = {}
    return strings.setdefault


def json_problem(data: bytes, error: orjson.JSONDecodeError) -> str:
    """Why `data` is not JSON, in one line."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as u:
        return f"not valid UTF-8 (byte offset {u.start})"
    message = str(error).split(": line ")[0]
    return f"not valid JSON ({message} at line {error.lineno}, column {error.colno})"
