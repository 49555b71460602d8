"""pi's two decoders agree: the fast one (orjson) and the checked one (Python's json with pi's
rules, for what only JavaScript reads) give the same value, types and key order included,
on every input either reads; and what memtui reads from a pi store is what the checked one
says, or a refusal from both."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memtui.stores import Change, open_store
from memtui.stores.formats.pi_json import PiJsonError, read, read_checked
from memtui.times import from_epoch_ms

FIXTURES = Path(__file__).parent / "fixtures"


def _same(a: Any, b: Any) -> bool:
    """Equal as a writer sees them: same types, same key order, floats bit for bit."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


_SPACE = st.sampled_from(["", " ", "\n", "\t", "\r\n", "  ", "\u00a0", "\x0b"])
_DIGITS = st.text("0123456789", min_size=1, max_size=25)
_NUMBER = st.builds(
    lambda sign, whole, frac, exp: sign + whole + frac + exp,
    st.sampled_from(["", "-", "+"]),
    st.one_of(_DIGITS, st.just("0")),
    st.one_of(st.just(""), _DIGITS.map(lambda d: "." + d), st.just(".")),
    st.one_of(
        st.just(""),
        st.builds(
            lambda e, s, d: e + s + d,
            st.sampled_from("eE"),
            st.sampled_from(["", "+", "-"]),
            st.text("0123456789", min_size=0, max_size=4),
        ),
    ),
)
_ESCAPE = st.sampled_from(
    ['\\"', "\\\\", "\\/", "\\b", "\\n", "\\u0000", "\\ud83d", "\\ude00", "\\ud83d\\ude00"]
)
_CHAR = st.one_of(st.characters(codec="utf-8", exclude_characters='"\\'), _ESCAPE)
_STRING = st.lists(_CHAR, max_size=6).map(lambda cs: '"' + "".join(cs) + '"')
_KEY = st.one_of(_STRING, st.sampled_from(['"2"', '"10"', '"01"', '"-1"', '"id"', '"a"']))
_CONSTANT = st.sampled_from(["true", "false", "null", "NaN", "Infinity", "-Infinity", "tru"])


def _array(items: list[str]) -> str:
    return "[" + ",".join(items) + "]"


def _object(pairs: list[tuple[str, str]]) -> str:
    return "{" + ",".join(f"{k}:{v}" for k, v in pairs) + "}"


_VALUE = st.recursive(
    st.one_of(_NUMBER, _STRING, _CONSTANT),
    lambda inner: st.one_of(
        st.lists(st.builds(lambda s, v, t: s + v + t, _SPACE, inner, _SPACE), max_size=4).map(
            _array
        ),
        st.lists(st.tuples(_KEY, inner), max_size=4).map(_object),
    ),
    max_leaves=12,
)


def _mutated(text: str, data: st.DataObject) -> bytes:
    raw = text.encode("utf-8", "surrogatepass")
    how = data.draw(st.sampled_from(["as is", "cut", "insert", "prefix"]))
    if how == "as is" or not raw:
        return raw
    at = data.draw(st.integers(0, len(raw)))
    if how == "cut":
        return raw[:at]
    if how == "prefix":
        return data.draw(st.sampled_from([b"\xef\xbb\xbf", b" ", b"\xff"])) + raw
    return raw[:at] + data.draw(st.binary(min_size=1, max_size=3)) + raw[at:]


_REFUSED = object()


def _agree(data: bytes) -> None:
    try:
        fast: Any = orjson.loads(data)
        fast_read = True
    except orjson.JSONDecodeError:
        fast_read = False
    try:
        checked = read_checked(data)
    except PiJsonError:
        checked = _REFUSED
    if checked is _REFUSED:
        assert not fast_read, f"orjson reads {data!r}, the checked decoder refuses it"
        with pytest.raises(PiJsonError):
            read(data)
        return
    if fast_read:
        assert _same(fast, checked), (data, fast, checked)
    assert _same(read(data), checked), data


@settings(max_examples=600, deadline=None)
@given(_VALUE, st.data())
@example('{"a": 1, "b": 2, "a": 3}', None)
@example('{"b": 1, "2": 2, "10": 3}', None)
@example("[18446744073709551615, 18446744073709551616, -9223372036854775809]", None)
@example("[9007199254740993, 1e400, 0.1e-400, -0, -0.0]", None)
@example('["\\ud83d", 12345678901234567890]', None)
def test_the_fast_and_the_checked_decoder_agree(text: str, data: st.DataObject | None) -> None:
    _agree(text.encode("utf-8", "surrogatepass") if data is None else _mutated(text, data))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=40))
def test_they_agree_on_any_bytes(data: bytes) -> None:
    _agree(data)


def test_they_agree_at_the_nesting_limit() -> None:
    for depth in (1000, 1024, 1025):
        data = b"[" * depth + b"1" + b"]" * depth
        try:
            orjson.loads(data)
            fast = True
        except orjson.JSONDecodeError:
            fast = False
        try:
            read_checked(data)
            checked = True
        except PiJsonError:
            checked = False
        assert fast == checked == (depth <= 1024)


def test_a_store_only_javascript_reads_keeps_big_integers_as_written(tmp_path: Path) -> None:
    """A lone surrogate in one entry makes orjson refuse the file: the other entries still
    read (and are written back) exactly as when orjson reads them."""
    value = json.loads((FIXTURES / "example-store.json").read_text())
    value["memories"][0]["counter"] = "@big@"
    value["memories"][1]["content"] = "cut emoji @lone@"
    text = json.dumps(value, indent=2, ensure_ascii=False)
    text = text.replace('"@big@"', "18446744073709551615").replace("@lone@", "\\ud83d")
    path = tmp_path / "memory-store.json"
    path.write_text(text)
    store = open_store(str(path))
    first, third = (store.memories()[i] for i in (0, 2))
    assert first.extra["counter"] == 18446744073709551615
    store.commit(
        [Change(third, third.with_(importance=0.5))],
        actor="user",
        kind="edit",
        reason="t",
        now=from_epoch_ms(1797000000000),
    )
    written = path.read_bytes()
    assert b'"counter": 18446744073709551615' in written and b"\\ud83d" in written
