"""The native store's fast path: an entry it builds is the entry the field-by-field reader
builds, and the record it leaves (its repeated strings shared) is the record the file had,
key for key and value for value; a record the fast path refuses is still read or named."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtui.errors import MemtuiError, StoreFormatError
from memtui.stores.formats.fields import EntryReader, new_share
from memtui.stores.formats.native import _build, _decode, _read
from memtui.stores.formats.registry import FORMATS

_TIMES = st.sampled_from(
    ["2026-04-28T13:15:19.749605Z", "2026-11-29T00:55:00Z", "2026-11-29T00:55:00+02:00", ""]
)
_ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.floats(-2, 2, allow_nan=False),
    st.text(max_size=3),
    st.lists(st.integers(0, 2), max_size=2),
)
_GOOD: dict[str, st.SearchStrategy[Any]] = {
    "id": st.sampled_from(["m_1", "m_2"]),
    "content": st.text(max_size=8),
    "category": st.sampled_from(["fact", "lesson", ""]),
    "importance": st.one_of(st.floats(-1, 2, allow_nan=False), st.integers(0, 1)),
    "source": st.sampled_from(["auto", "manual", "user"]),
    "tags": st.lists(st.text(max_size=3), max_size=2),
    "paths": st.lists(st.text(max_size=3), max_size=2),
    "created_at": _TIMES,
    "last_accessed_at": _TIMES,
    "last_decayed_at": _TIMES,
    "updated_at": _TIMES,
    "access_count": st.integers(-1, 9),
    "evidence_count": st.integers(0, 5),
    "tenured": st.booleans(),
    "user_id": st.sampled_from(["alice", "bob", ""]),
    "status": st.sampled_from(["active", "merged", "superseded"]),
    "supersedes": st.lists(st.sampled_from(["m_3", "m_4"]), max_size=2),
    "superseded_by": st.sampled_from(["m_5"]),
    "embedding": st.lists(st.floats(-1, 1, allow_nan=False), max_size=3),
    "version": st.integers(0, 3),
    "extra": st.dictionaries(st.sampled_from(["a", "b"]), st.integers(0, 2), max_size=2),
}


@st.composite
def records(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in draw(st.permutations(list(_GOOD))):
        roll = draw(st.integers(0, 9))
        if roll == 0 and key not in ("id", "content"):
            continue
        out[key] = draw(_ODD) if roll == 1 else draw(_GOOD[key])
    return out


@settings(max_examples=500, deadline=None)
@given(batch=st.lists(records(), min_size=1, max_size=4))
def test_the_fast_path_builds_what_the_checked_reader_builds(
    batch: list[dict[str, Any]],
) -> None:
    share = new_share()  # one read: its strings shared across the records
    for record in batch:
        as_read = copy.deepcopy(record)
        try:
            fast = _build(record, share)
        except (TypeError, ValueError, OverflowError, KeyError, AttributeError):
            continue  # `_read` hands it to the checked reader (below)
        assert fast == _decode(EntryReader(Path("s.json"), "memories[1]", as_read))
        assert orjson.dumps(record) == orjson.dumps(as_read)  # the record as the file had it


@settings(max_examples=300, deadline=None)
@given(record=records())
def test_a_record_the_fast_path_refuses_is_read_or_named(record: dict[str, Any]) -> None:
    as_read = copy.deepcopy(record)
    try:
        memory = _read(record, Path("s.json"), "1")
    except StoreFormatError as e:
        assert str(e).startswith("s.json: memories[1]")
        return
    assert memory == _decode(EntryReader(Path("s.json"), "memories[1]", as_read))
    assert orjson.dumps(record) == orjson.dumps(as_read)


def test_equal_strings_of_one_read_are_one_object() -> None:
    share = new_share()
    first, second = (
        orjson.loads(
            b'{"id":"m_%d","content":"x","category":"fact","user_id":"alice",'
            b'"created_at":"2026-11-29T00:55:00Z","last_accessed_at":"2026-11-29T00:55:00Z",'
            b'"last_decayed_at":"2026-11-29T00:55:00Z"}' % n
        )
        for n in (1, 2)
    )
    a, b = _build(first, share), _build(second, share)
    assert a.category is b.category and a.user_id is b.user_id
    assert first["user_id"] is second["user_id"]
    assert a.created_at is a.last_accessed_at is a.last_decayed_at
    assert a.extra is b.extra == {}


@settings(max_examples=300, deadline=None)
@given(record=records(), changed=st.floats(0.01, 1, allow_nan=False))
def test_a_commit_encodes_from_the_image_what_each_format_encodes(
    record: dict[str, Any], changed: float
) -> None:
    """A commit hands each format the entry's image it holds (`encode_image`): the record is
    the one `encode` makes, and where the format says the image re-encodes to it, the ledger
    is right to keep no record beside the image."""
    try:
        was = _build(copy.deepcopy(record), new_share())
    except (TypeError, ValueError, OverflowError, KeyError, AttributeError):
        return
    entry = was.with_(importance=changed)
    image = entry.to_dict()
    for name, fmt in FORMATS.items():
        try:
            base = fmt.encode(was, None) if fmt.keeps(was) else None
            expected = fmt.encode(entry, base)
        except MemtuiError:  # an entry the format cannot hold (a Hermes folder's users)
            with pytest.raises(MemtuiError):
                fmt.encode_image(entry, image, None)
            continue
        made, exact = fmt.encode_image(entry, image, base)
        assert made == expected, name
        if exact:
            assert made is not None and fmt.record_image(image, made) is None, name
