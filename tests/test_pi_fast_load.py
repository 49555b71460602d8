"""The pi loader's fast path: an entry memtui takes as the file has it is exactly what pi's
loader would leave (same keys, order and values, same Memory, nothing to report as read
differently), for entries near and far from pi's own layout."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from memtui.stores.formats.pi import (
    _as_pi_loads_it,
    _memory,
    _normalised_fields,
    pi_entry,
)

_ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.just(0.0),
    st.just(-0.0),
    st.just(math.nan),
    st.just(math.inf),
    st.integers(-3, 3),
    st.floats(-2, 2, allow_nan=False),
    st.text(max_size=3),
    st.lists(st.one_of(st.text(max_size=2), st.integers(0, 2)), max_size=2),
)
_GOOD: dict[str, st.SearchStrategy[Any]] = {
    "id": st.sampled_from(["mem_a", "mem_b1"]),
    "type": st.sampled_from(["fact", "lesson", "preference"]),
    "content": st.text(max_size=8),
    "paths": st.lists(st.text(max_size=3), max_size=2),
    "potency": st.one_of(st.floats(0.01, 1), st.just(1), st.just(1.0)),
    "createdAt": st.integers(1, 2**45),
    "lastInjectedAt": st.one_of(st.integers(1, 2**45), st.floats(1, 2**45)),
    "lastDecayedAt": st.integers(1, 2**45),
    "accessCount": st.one_of(st.integers(0, 9), st.just(2.0)),
    "source": st.sampled_from(["auto", "manual", "user"]),
    "tags": st.lists(st.text(max_size=3), max_size=2),
    "tenured": st.just(True),
    "evidenceCount": st.one_of(st.integers(1, 5), st.just(3.0)),
    "userId": st.text(max_size=3),
    "sourceSession": st.one_of(st.text(max_size=3), st.just(0.0), st.integers(0, 2)),
}


@st.composite
def records(draw: st.DrawFn) -> dict[str, Any]:
    keys = draw(st.permutations(list(_GOOD)))
    out: dict[str, Any] = {}
    for key in keys:
        roll = draw(st.integers(0, 9))
        if roll == 0:
            continue  # missing
        out[key] = draw(_ODD) if roll == 1 else draw(_GOOD[key])
    return out


@settings(max_examples=600, deadline=None)
@given(record=records())
def test_an_entry_taken_as_it_is_is_what_pis_loader_leaves(record: dict[str, Any]) -> None:
    if not _as_pi_loads_it(record):
        return
    entry = pi_entry(record, None)
    assert entry is not None
    assert list(entry) == list(record)
    assert _normalised_fields(record, entry) == []
    fast, checked = _memory(record), _memory(entry)
    assert fast == checked
    assert [(k, type(v)) for k, v in fast.extra.items()] == [
        (k, type(v)) for k, v in checked.extra.items()
    ]


def test_entries_pi_writes_take_the_fast_path() -> None:
    written = {
        "type": "fact", "content": "x", "paths": [], "potency": 0.8, "source": "auto",
        "tags": ["a"], "id": "mem_1", "createdAt": 1, "lastInjectedAt": 1,
        "lastDecayedAt": 1, "accessCount": 0,
    }  # fmt: skip
    assert _as_pi_loads_it(written)
    assert not _as_pi_loads_it({**written, "tenured": False})  # pi drops it on load
    assert not _as_pi_loads_it({k: v for k, v in written.items() if k != "lastDecayedAt"})
