"""Reading a native journal: the quick check of a change as JSON gives it says what the full
check says, for changes sound and damaged."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from memtui.stores import ledger

_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.text(max_size=3),
    st.lists(st.integers(0, 2), max_size=3),
    st.dictionaries(st.text(max_size=2), st.integers(0, 2), max_size=2),
)
_PAIRS = st.dictionaries(
    st.text(max_size=3), st.one_of(_VALUE, st.tuples(_VALUE, _VALUE).map(list))
)
_CHANGE = st.dictionaries(
    st.sampled_from(
        ["id", "before", "after", "before_raw", "after_raw", "diff", "after_fp", "position"]
    ),
    st.one_of(_VALUE, _PAIRS),
)


@settings(max_examples=1500, deadline=None)
@given(st.one_of(_CHANGE, _VALUE))
def test_the_quick_check_of_a_change_never_passes_what_the_full_check_refuses(
    change: Any,
) -> None:
    if ledger._plainly_sound(change):
        assert ledger._sound(change)


def test_a_sound_compact_change_passes_the_quick_check() -> None:
    change = {"id": "m1", "diff": {"importance": [0.5, 0.4]}, "after_fp": "ab", "position": 3}
    assert ledger._plainly_sound(change)
    assert not ledger._plainly_sound({**change, "diff": {"importance": [0.5]}})
    assert not ledger._sound({**change, "diff": {"importance": [0.5]}})
